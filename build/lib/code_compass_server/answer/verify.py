"""Checks on the model's answer against the evidence that was really sent.

(docs/rules.md: verified-citations, cite-evidence-ids, context-only.)

- every [E#] must name sent evidence; others are removed from the text and reported;
- sentences that make claims without any citation are flagged;
- identifiers (snake_case, camelCase, dotted, backticked, calls) in a claim that appear in
  none of its cited snippets are flagged;
- path-like tokens that are not evidence paths are flagged as invented (and `path:N` line
  references outside the evidence's ranges);
- an answer in another language than the question is flagged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from code_compass_server.answer.extractive import extractive_frame
from code_compass_server.answer.messages import EN, Messages
from code_compass_server.answer.reread import Evidence
from code_compass_server.constants import CLAIM_MIN_WORDS
from code_compass_server.query.language import detect_language, question_language

_CITE_GROUP = re.compile(r"[ \t]*\[\s*(E\d+(?:\s*[,;]\s*E\d+)*)\s*\]")
CITE_ID = re.compile(r"\[(E\d+)\]")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_BACKTICK = re.compile(r"`([^`\n]+)`")
_SNAKE = re.compile(r"(?<![\w.])_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_CAMEL = re.compile(r"(?<![\w.])(?:[a-z]+[A-Z]|[A-Z][a-z0-9]+[A-Z])[A-Za-z0-9]*\b")
_DOTTED = re.compile(r"(?<![\w./])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
_CALL = re.compile(r"(?<![\w.])[A-Za-z_]\w*\(\)")
_PATH = re.compile(
    r"(?<![\w/.:-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]*(?::\d+(?:-\d+)?)?"
    r"|(?<![\w/.-])[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs"
    r"|md|txt|toml|json|yaml|yml|ini|cfg|sql|sh|pdf|html|css)(?::\d+(?:-\d+)?)?\b"
)
_LINE_REF = re.compile(r":(\d+)(?:-(\d+))?$")
_NEGATION = re.compile(
    r"\b(?:not|no|none|nothing|cannot|can't|doesn't|isn't|aren't|don't|without|missing|"
    r"não|nao|nenhum|nenhuma|falta|ningún|ninguna|ningun|nada|ne|pas|aucun|aucune|manque|"
    r"nicht|kein|keine|fehlt|non|nessun)\b",
    re.I,
)
_ABOUT_EVIDENCE = re.compile(
    r"evidence|context|provided|index|snippet|shown|show|found|contain|include|mention|"
    r"evidên|eviden|contexto|encontr|trecho|mostr|aparec|fourni|trouv|extrait|montr|"
    r"kontext|gefunden|zeigt|enthalt|enthält|fornit|trovat",
    re.I,
)
LIST_MARKER = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_ABBREV = {"e.g", "i.e", "etc", "vs", "cf"}


@dataclass(slots=True)
class Verification:
    text: str  # the answer with citations to unknown evidence removed
    citations_used: list[str]  # ids cited, first-appearance order
    removed: list[str] = field(default_factory=list)  # fabricated ids, one entry per removal
    claims: int = 0
    uncited_claims: list[str] = field(default_factory=list)
    unknown_identifiers: list[str] = field(default_factory=list)
    invented_paths: list[str] = field(default_factory=list)
    answer_language: str | None = None
    question_language: str | None = None

    @property
    def wrong_language(self) -> bool:
        return bool(
            self.answer_language
            and self.question_language
            and self.answer_language != self.question_language
        )

    def flags(self, msg: Messages = EN) -> list[str]:
        out: list[str] = []
        if self.removed:
            out.append(msg.flag_removed.format(ids=", ".join(self.removed)))
        if self.uncited_claims:
            out.append(msg.flag_uncited.format(n=len(self.uncited_claims)))
        if self.unknown_identifiers:
            names = ", ".join(f"`{i}`" for i in self.unknown_identifiers)
            out.append(msg.flag_identifiers.format(names=names))
        if self.invented_paths:
            out.append(msg.flag_paths.format(paths=", ".join(self.invented_paths)))
        if self.wrong_language:
            out.append(
                msg.flag_language.format(
                    answer=self.answer_language, question=self.question_language
                )
            )
        return out


def strip_unknown_citations(text: str, valid: set[str]) -> tuple[str, list[str]]:
    """Remove ids not in `valid` from every [E#] / [E1, E2] group; report what went."""
    removed: list[str] = []

    def fix(m: re.Match[str]) -> str:
        ids = re.findall(r"E\d+", m.group(1))
        keep = [i for i in ids if i in valid]
        removed.extend(i for i in ids if i not in valid)
        lead = m.group(0)[: len(m.group(0)) - len(m.group(0).lstrip(" \t"))]
        return lead + "".join(f"[{i}]" for i in keep) if keep else ""

    return _CITE_GROUP.sub(fix, text), removed


def sentences(text: str) -> list[str]:
    """Claim-sized pieces: list items and sentences, code blocks left out, trailing
    citation-only fragments glued back to the sentence they follow."""
    out: list[str] = []
    for line in _FENCE.sub("\n", text).splitlines():
        line = LIST_MARKER.sub("", line).strip()
        if not line or line.startswith("#"):
            continue
        for piece in re.split(r"(?<=[.!?])\s+", line):
            piece = piece.strip()
            if not piece:
                continue
            if out and re.fullmatch(r"(?:\[E\d+\]\s*)+[.!?]?", piece):
                out[-1] = f"{out[-1]} {piece}"
            else:
                out.append(piece)
    return out


def is_claim(sentence: str) -> bool:
    bare = CITE_ID.sub("", sentence).strip()
    if bare.endswith(":") or len(bare.split()) < CLAIM_MIN_WORDS:
        return False
    # "The evidence does not show X" states what is missing: no citation needed
    # (docs/rules.md: grounding-prompt).
    return not (_NEGATION.search(bare) and _ABOUT_EVIDENCE.search(bare))


def identifiers(sentence: str) -> list[str]:
    """Code-looking tokens of a sentence (paths excluded; they are checked separately)."""
    bare = CITE_ID.sub("", sentence)
    found: list[str] = []
    for m in _BACKTICK.finditer(bare):
        inner = m.group(1).strip()
        if re.fullmatch(r"[A-Za-z_][\w.]*(?:\(\))?", inner):
            found.append(inner)
    plain = _BACKTICK.sub(" ", bare)
    for rx in (_SNAKE, _CAMEL, _DOTTED, _CALL):
        found.extend(m.group(0) for m in rx.finditer(plain))
    out: list[str] = []
    for tok in found:
        tok = tok.removesuffix("()").rstrip(".")
        if not tok or tok.lower() in _ABBREV or _PATH.fullmatch(tok):
            continue
        if "." in tok and all(len(p) <= 1 for p in tok.split(".")):
            continue
        out.append(tok)
    return list(dict.fromkeys(out))


def paths(sentence: str) -> list[str]:
    bare = CITE_ID.sub("", sentence)
    out = []
    for m in _PATH.finditer(bare):
        tok = m.group(0).rstrip(".,;:")
        if "://" in bare[max(0, m.start() - 8) : m.start() + 3]:
            continue  # URLs are not workspace paths
        core = _LINE_REF.sub("", tok)
        if "/" in core and not re.search(r"\.\w{1,5}$", core) and not core.endswith("/"):
            # "and/or", "input/output": only paths with an extension or a trailing slash count
            inside_ticks = f"`{tok}`" in sentence
            if not inside_ticks:
                continue
        out.append(tok)
    return list(dict.fromkeys(out))


def _known_identifier(tok: str, texts: str) -> bool:
    if tok in texts:
        return True
    parts = [p for p in tok.split(".") if p]
    # `Engine.index` is fine when the snippet has `class Engine` and `def index`;
    # `self.x` / `cls.x` only need the attribute.
    parts = [p for p in parts if p not in ("self", "cls", "this")]
    return len(parts) > 0 and all(p in texts for p in parts)


def path_known(tok: str, evidences: list[Evidence]) -> bool:
    m = _LINE_REF.search(tok)
    core = _LINE_REF.sub("", tok).lstrip("./")
    if not core:
        return True
    matches = [
        e
        for e in evidences
        if e.path == core
        or e.path.endswith("/" + core)
        or e.path.startswith(core.rstrip("/") + "/")
        or core.endswith("/" + e.path)
    ]
    if not matches:
        # A path quoted inside the evidence (an import, a config value) is not invented.
        return any(core in e.text for e in evidences)
    if m:
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        return any(e.start_line - 2 <= lo and hi <= e.end_line + 2 for e in matches)
    return True


def verify(text: str, evidences: list[Evidence], question: str) -> Verification:
    by_id = {e.id: e for e in evidences}
    cleaned, removed = strip_unknown_citations(text, set(by_id))
    cited_order = list(dict.fromkeys(CITE_ID.findall(cleaned)))
    result = Verification(
        text=cleaned,
        citations_used=[i for i in cited_order if i in by_id],
        removed=removed,
        answer_language=detect_language(cleaned),
        question_language=question_language(question),
    )
    all_text = _evidence_text(evidences)
    unknown: list[str] = []
    invented: list[str] = []
    for sent in sentences(cleaned):
        invented.extend(p for p in paths(sent) if not path_known(p, evidences))
        if not is_claim(sent):
            continue
        result.claims += 1
        cited = [by_id[i] for i in CITE_ID.findall(sent) if i in by_id]
        if not cited:
            result.uncited_claims.append(sent)
        unknown.extend(_unknown_identifiers(sent, _evidence_text(cited) if cited else all_text))
    result.unknown_identifiers = list(dict.fromkeys(unknown))
    result.invented_paths = list(dict.fromkeys(invented))
    # Removal above makes a surviving fabricated citation impossible; keep it checked.
    assert all(i in by_id for i in CITE_ID.findall(cleaned)), "fabricated citation survived"
    return result


def _unknown_identifiers(claim: str, evidence_text: str) -> list[str]:
    """The claim's identifiers that its cited evidence (all evidence if uncited) lacks."""
    return [tok for tok in identifiers(claim) if not _known_identifier(tok, evidence_text)]


def _evidence_text(evidences: list[Evidence]) -> str:
    return "\n".join(f"{e.path}\n{e.hit.symbol}\n{e.text}" for e in evidences)


def verify_answer(
    text: str, evidences: list[Evidence], question: str, *, extractive: bool = False
) -> Verification:
    """Verify stage of `ask`. An extractive answer's label and footer make no claims: only
    its body is checked; the returned text is the whole answer with citations fixed."""
    head, body, foot = extractive_frame(text) if extractive else ("", text, "")
    result = verify(body, evidences, question)
    result.text = "\n".join(part for part in (head, result.text, foot) if part)
    return result
