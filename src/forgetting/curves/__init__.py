"""Curve shapes: does the exponential of the decay engine matter, and what do human data say?

Built on :mod:`forgetting.decay` (its engines, sessions and metrics), never the other way round.

* :mod:`~forgetting.curves.families` -- other forgetting curves, each a pure function: the FSRS
  power law, Wickelgren's power law, two exponentials, Ebbinghaus's logarithm.
* :mod:`~forgetting.curves.power_engine` -- :class:`~forgetting.curves.power_engine.PowerLawEngine`,
  the decay engine with the power-law curve in place of the exponential.
* :mod:`~forgetting.curves.savings_data` -- the human savings data of ``data/curves/``, checked on load.
* :mod:`~forgetting.curves.fits` -- least-squares fits of each family, with standard errors,
  information criteria and leave-one-out error.
* :mod:`~forgetting.curves.study` -- exponential against power law inside the engine, at matched
  grace periods.
* :mod:`~forgetting.curves.fsrs_reference` -- the ``fsrs`` package as the reference for the FSRS form.

Nothing here is imported by ``import forgetting``; :mod:`~forgetting.curves.fits` needs scipy.
"""
