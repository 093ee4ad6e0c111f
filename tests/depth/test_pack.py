from __future__ import annotations

import pytest

from code_compass_server.depth.classifier import classify
from code_compass_server.depth.conversation import ConversationStore
from code_compass_server.depth.depth_records import DepthDecision, Message
from code_compass_server.depth.pack import build_pack
from code_compass_server.depth.retrieval_plan import plan_for
from code_compass_server.depth.token_count import count_tokens
from tests.depth.helpers import CORPUS, many_hits, search

EXPECTED = {
    "D0": ["persona", "working_set"],
    "D1": ["persona", "working_set", "episodic"],
    "D2": ["persona", "working_set", "episodic", "semantic"],
    "D3": ["persona", "working_set", "episodic", "semantic", "claims"],
    "D4": ["persona", "working_set", "semantic"],
}
BUDGET = {"D0": 500, "D1": 1500, "D2": 3000, "D3": 4000, "D4": 2500}


def long_history(turns: int) -> list[Message]:
    out = []
    for n in range(turns):
        out.append(
            Message("user", f"Question {n}: where is retry_with_backoff number {n} used? " * 5)
        )
        out.append(
            Message("assistant", f"It is used in http/client.py line {n} [E1]. " + "Detail. " * 120)
        )
    return out


def decision(depth: str) -> DepthDecision:
    return DepthDecision(depth, ["test"], {}, 0.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", ["D0", "D1", "D2", "D3", "D4"])
def test_each_level_has_exactly_its_sections_and_fits_budget(depth: str) -> None:
    plan = plan_for(depth)  # type: ignore[arg-type]
    assert plan.max_tokens == BUDGET[depth]
    pack = build_pack(
        decision(depth),
        plan,
        "Where is the retry logic?",
        long_history(30),
        search=many_hits,
        active_file="http/client.py",
        selection="def retry_with_backoff(send):\n    ...\n" * 200,
        workspace="demo",
    )
    assert pack.sections == EXPECTED[depth]
    assert list(pack.to_json()["sections"]) == EXPECTED[depth]
    text = pack.render()
    assert pack.tokens == count_tokens(text)
    assert pack.tokens <= plan.effective_budget < plan.max_tokens
    assert pack.dropped > 0  # long history + many long hits had to be trimmed
    assert text.rstrip().endswith("Where is the retry logic?")  # never dropped
    assert "=== PERSONA ===" in text and "'demo'" in text
    for line in plan.llm_instructions:
        assert line in text
    sections_in_items = {i.section for i in pack.items}
    assert sections_in_items <= set(EXPECTED[depth])
    if depth == "D4":
        assert not any(i.kind in ("message", "selection", "active_file") for i in pack.items)
    else:
        assert any(i.section == "working_set" and i.hit is None for i in pack.items)
    if depth in ("D2", "D3"):
        assert any(i.kind == "message" for i in pack.items)
    # evidence survives trimming before messages do (at least the top hits)
    assert len(pack.evidence_hits) >= 2
    assert pack.evidence_hits[0].score == max(h.score for h in pack.evidence_hits)


def test_trimming_drops_oldest_messages_first() -> None:
    plan = plan_for("D3")
    pack = build_pack(decision("D3"), plan, "No, that's wrong.", long_history(30), search=many_hits)
    kept = [i.text for i in pack.items if i.kind == "message"]
    assert kept, "the latest messages are kept"
    assert "Question 29" in "".join(kept) or "line 29" in "".join(kept)
    assert "Question 0:" not in "".join(kept)


def test_small_pack_is_not_trimmed_and_hits_are_evidence() -> None:
    pack = build_pack(decision("D2"), plan_for("D2"), "Why retry_with_backoff?", [], search=search)
    assert pack.dropped == 0
    assert [h.path for h in pack.evidence_hits] == ["http/client.py"]
    rendered = pack.render()
    assert "[E1] http/client.py:5-20" in rendered
    assert "<<<\ndef retry_with_backoff" in rendered  # evidence is marked as data
    js = pack.to_json()
    assert js["evidence"][0]["id"] == "E1" and js["depthLevel"] == "D2"


def test_d1_query_carries_the_thread() -> None:
    history = [
        Message("user", "Where is retry_with_backoff?"),
        Message("assistant", "In http/client.py [E1]."),
    ]
    pack = build_pack(decision("D1"), plan_for("D1"), "And the tests?", history, search=search)
    assert pack.queries[0] == "And the tests? retry_with_backoff"  # the subject, not filler
    assert any(h.path == "http/client.py" for h in pack.evidence_hits)
    assert [i for i in pack.items if i.section == "episodic"]


def test_d3_pack_carries_the_claim_and_evidence_on_both_sides() -> None:
    store = ConversationStore()
    session = search("DEFAULT_TIMEOUT session", 1)[0]
    assert session.path == "api/session.py"
    store.record_answer(
        "c1",
        "Where is the request timeout configured?",
        "The timeout is hard-coded in api/session.py as DEFAULT_TIMEOUT = 30 [E1]. "
        "Nothing else overrides it.",
        [session],
    )
    question = "No, that's wrong, the timeout is set in settings.py."
    d = classify(question, store.turns("c1"))
    assert d.depth == "D3"
    pack = build_pack(d, plan_for(d.depth), question, store.turns("c1"), search=search)
    assert "claims" in pack.sections
    claim_items = [i for i in pack.items if i.section == "claims"]
    claim = next(i for i in claim_items if i.kind == "claim")
    assert "hard-coded in api/session.py as DEFAULT_TIMEOUT = 30" in claim.text
    sides = {(i.side, i.hit.path) for i in claim_items if i.hit is not None}
    assert ("cited", "api/session.py") in sides  # the evidence the claim stood on
    assert ("conflict", "settings.py") in sides  # the evidence for the user's correction
    text = pack.render()
    assert text.index("Claim C1") < text.index("Evidence the claim cited")
    assert "Evidence found for the user's correction" in text
    assert "Do not defend the earlier answer blindly" in text
    assert CORPUS["settings.py"][2] in text
    # each piece of evidence appears once, numbered in render order
    paths = [h.path for h in pack.evidence_hits]
    assert len(paths) == len(set(paths))


@pytest.mark.parametrize(
    ("depth", "window"), [("D0", 2), ("D1", 5), ("D2", 3), ("D3", 8), ("D4", 0)]
)
def test_working_set_window_per_level(depth: str, window: int) -> None:
    history = [
        Message("user" if n % 2 == 0 else "assistant", f"message number {n} about retries")
        for n in range(8)
    ]
    pack = build_pack(decision(depth), plan_for(depth), "and then?", history, search=search)  # type: ignore[arg-type]
    msgs = [i.text for i in pack.items if i.kind == "message"]
    assert len(msgs) == window
    if window:
        assert "message number 7" in msgs[-1]  # conversation order, newest last
