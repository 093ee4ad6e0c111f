"""Between re-read and prompt: does the evidence give the answer something to stand on?

No evidence, or a question naming a symbol that exists nowhere in the index, ends in a fixed
refusal and no LLM call (docs/rules.md: no evidence, no LLM; unknown entity). Otherwise the
coverage and ambiguity of the evidence are measured for the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from code_compass_server.answer.absent import Absence, find_absent
from code_compass_server.answer.ambiguity import AmbiguityResult, assess_ambiguity
from code_compass_server.answer.confidence import (
    AMBIGUITY_NONE,
    RULE_NO_EVIDENCE,
    RULE_UNKNOWN_SYMBOL,
)
from code_compass_server.answer.coverage import coverage_level
from code_compass_server.answer.messages import Messages, messages_for
from code_compass_server.answer.near_names import writer_values
from code_compass_server.answer.reread import Evidence, Reread
from code_compass_server.answer.source import EvidenceSource
from code_compass_server.answer.verify import identifiers
from code_compass_server.records import SearchParams


@dataclass(frozen=True, slots=True)
class Refusal:
    """The fixed answer given instead of calling the model, and why."""

    text: str
    blocking: tuple[str, ...]
    caveats: tuple[str, ...] = ()
    critical_failure: str | None = None  # set when a pipeline step itself failed


@dataclass(frozen=True, slots=True)
class Grounds:
    coverage: str  # high | medium | low | none
    language: str | None  # the question's, None when unsure
    missing: list[str]  # symbols the question names that the index lacks
    ambiguity: AmbiguityResult  # `none` when refused: there is nothing to disambiguate
    refusal: Refusal | None
    # Members the question names (option, parameter, ...) that the evidence lacks (absent.py).
    absent: list[Absence] = field(default_factory=list)


def named_symbols(question: str) -> list[str]:
    """Code symbols the question names: backticked, snake_case, camelCase, dotted, calls; not
    the writer's own values (`ctx.expression` passed to a call, `${DB_HOST}`: writer_values)."""
    values = writer_values(question)
    return [n for n in identifiers(question) if n.split("(", 1)[0].rsplit(".", 1)[-1] not in values]


def missing_symbols(
    named: list[str], source: EvidenceSource, evidences: list[Evidence]
) -> list[str]:
    texts = "\n".join(f"{e.hit.symbol}\n{e.text}" for e in evidences)
    missing = []
    for name in named:
        candidates = [name, name.rsplit(".", 1)[-1]]
        if any(c in texts for c in candidates):
            continue
        if any(source.symbol_exists(c) for c in dict.fromkeys(candidates)):
            continue
        missing.append(name)
    return missing


def refusal(found: Reread, missing: list[str], msg: Messages) -> Refusal | None:
    """The fixed answer when there is no evidence or a named symbol is missing, else None."""
    blocking = (RULE_UNKNOWN_SYMBOL,) if missing else ()
    caveats = (msg.not_in_index.format(names=_quoted(missing)),) if missing else ()
    if not found.evidences:
        stale = msg.stale_dropped.format(n=len(found.dropped)) if found.dropped else ""
        return Refusal(
            msg.no_evidence,
            (RULE_NO_EVIDENCE, *blocking),
            caveats,
            critical_failure=msg.no_evidence_failure.format(stale=stale),
        )
    if missing:
        return Refusal(msg.unknown_symbol.format(names=_quoted(missing)), blocking, caveats)
    return None


def _quoted(names: list[str]) -> str:
    return ", ".join(f"`{m}`" for m in names)


def check_grounds(
    params: SearchParams, source: EvidenceSource, found: Reread, language: str | None
) -> Grounds:
    """`language` is the question's (query.question_language): the refusal is written in it."""
    question = params.query
    msg = messages_for(language)
    named = named_symbols(question)
    absent = find_absent(question, found.evidences, source)
    # A member said absent (an option of a named owner), with its neighbour, is answered as
    # such rather than refused; a bare name found nowhere is still an unknown symbol (FAIL, no
    # model), its refusal opening with the absence and the neighbour it cites.
    said = {a.name.lstrip("-") for a in absent if not a.how}
    missing = [
        m
        for m in missing_symbols(named, source, found.evidences)
        if not said & {m, m.rsplit(".", 1)[-1], m.split("(", 1)[0]}
    ]
    refused = refusal(found, missing, msg)
    ambiguity = (
        AmbiguityResult(AMBIGUITY_NONE)
        if refused
        else assess_ambiguity(question, named, found.evidences, params.path_prefix, msg)
    )
    return Grounds(
        coverage=coverage_level([e.score for e in found.evidences]),
        language=language,
        missing=missing,
        ambiguity=ambiguity,
        refusal=refused,
        absent=[a for a in absent if a.how] if refused and found.evidences else absent,
    )
