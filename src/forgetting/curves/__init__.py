"""Curve shapes beside the exponential: other forgetting curves, and the power-law engine.

* :mod:`~forgetting.curves.families` -- other forgetting curves, each a pure function: the FSRS
  power law, Wickelgren's power law, two exponentials, Ebbinghaus's logarithm.
* :mod:`~forgetting.curves.power_engine` -- :class:`~forgetting.curves.power_engine.PowerLawEngine`,
  the decay engine with the power-law curve in place of the exponential.

Built on :mod:`forgetting.decay`, never the other way round. The curve chapter's study (human
savings data, fits, the engine comparison) is :mod:`forgetting.studies.curves`.
"""
