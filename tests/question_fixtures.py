"""Small question sets for hypothesis, and retrieval read off its definition (shared by the question tests)."""

import numpy as np
from hypothesis import strategies as st

from forgetting.studies.conversations.question_retrieval import QuestionSet

SCORES = [-0.5, 0.0, 0.1, 0.25, 0.9]  # few values, so ties are common


@st.composite
def question_sets(draw, min_questions=1):
    n_q = draw(st.integers(min_questions, 6))
    n_t = draw(st.integers(1, 7))
    scores = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from(SCORES), min_size=n_t, max_size=n_t), min_size=n_q, max_size=n_q
            )
        )
    )
    evidence = tuple(
        frozenset(draw(st.sets(st.integers(0, n_t - 1), min_size=1, max_size=n_t))) for _ in range(n_q)
    )
    return QuestionSet("conv", scores, evidence)


def direct_retrieve(row, k, suppressed=()):
    """The reading of the rule: candidates sorted on (-score, index), the first k."""
    return sorted((t for t in range(len(row)) if t not in suppressed), key=lambda t: (-row[t], t))[:k]
