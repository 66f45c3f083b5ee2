"""LongMemEval questions written by hand, in the layout of its files (shared by the loader's and
the knowledge-updates chapter's tests)."""


def turn(role, content, has_answer=None):
    """One turn of a session; ``has_answer`` left out unless given, as most of LongMemEval's turns."""
    item = {"role": role, "content": content}
    if has_answer is not None:
        item["has_answer"] = has_answer
    return item


#: A knowledge update: the old value on May 10, an unrelated session on May 12, the new value on
#: May 20, the sessions given out of date order.
UPDATE = {
    "question_id": "0a1b2c3d",
    "question_type": "knowledge-update",
    "question": "Where do I keep my bike now?",
    "answer": "in the basement",
    "question_date": "2023/06/01 (Thu) 10:00",
    "haystack_session_ids": ["answer_x_2", "noise_1", "answer_x_1"],
    "haystack_dates": ["2023/05/20 (Sat) 09:00", "2023/05/12 (Fri) 18:30", "2023/05/10 (Wed) 08:03"],
    "haystack_sessions": [
        [turn("user", "I moved my bike to the basement.", True), turn("assistant", "Noted.", False)],
        [turn("user", "Any soup recipes?"), turn("assistant", "Try lentil soup.")],
        [turn("user", "My bike lives on the balcony.", True), turn("assistant", "Nice.", False)],
    ],
    "answer_session_ids": ["answer_x_1", "answer_x_2"],
}
