"""The curve chapter's study: does the exponential of the decay engine matter, and what do human data say?

* :mod:`~forgetting.studies.curves.savings_data` -- the human savings data of ``data/curves/``, checked on load.
* :mod:`~forgetting.studies.curves.fits` -- least-squares fits of each family, with standard errors,
  information criteria and leave-one-out error (needs scipy).
* :mod:`~forgetting.studies.curves.study` -- exponential against power law inside the engine, at matched
  grace periods.
* :mod:`~forgetting.studies.curves.fsrs_reference` -- the ``fsrs`` package as the reference for the FSRS form.

The curve families and the power-law engine are the library's, :mod:`forgetting.curves`.
"""
