"""The book's studies: every experiment of its chapters, built on the library, never imported by it.

* :mod:`~forgetting.studies.decay` -- the decay-engine article: sessions, replay, every comparison.
* :mod:`~forgetting.studies.curves` -- the curve chapter: human savings data, fits, the power law.
* :mod:`~forgetting.studies.worlds` -- the simulated worlds of Experiments 1-4 and the theory check.
* :mod:`~forgetting.studies.text` -- Experiment 5 on real text.
* :mod:`~forgetting.studies.governance` -- the governance worlds: both signals together.
* :mod:`~forgetting.studies.conversations` -- the real-conversation chapter on LoCoMo.
* :mod:`~forgetting.studies.agent` -- the use-agent chapter: a seeded agent's world, recall by shared words.
* :mod:`~forgetting.studies.executor`, :mod:`~forgetting.studies.progress`,
  :mod:`~forgetting.studies.stats`, :mod:`~forgetting.studies.mean_difference`,
  :mod:`~forgetting.studies.published` -- where seed sweeps run, their progress, summaries over
  seeds, and the sources' published numbers.

Nothing here is imported by ``import forgetting``; each subpackage loads on first use.
"""
