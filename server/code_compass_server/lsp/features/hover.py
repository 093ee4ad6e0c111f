"""`textDocument/hover`: the resolved definition, its signature and doc summary, then evidence.

The identifier is resolved as its language does (`lsp.resolve`: jedi for Python, within a
time budget); only when that is unavailable or fails does the name lookup answer, and the hover
says so ("3 candidates by name"). Names defined outside the workspace (builtins, stdlib,
third-party) show no workspace definition. Evidence is about *this* symbol: code lines where the
name is an identifier token, prose that backticks or qualifies it. Lexical index + symbol table
only (no embeddings), to stay within the hover budget. `null` for anything that names nothing.

Markdown stays readable where links are not rendered (reference-style links whose text is
`path:line`); clients without Markdown get plain text (`hover.contentFormat`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from code_compass_server.constants import (
    HOVER_EVIDENCE_PER_KIND,
    HOVER_MAX_DEFINITIONS,
    HOVER_MENTIONS_LIMIT,
)
from code_compass_server.index.languages import (
    CODE_LANGUAGES,
    DOC_LANGUAGES,
    PAGED_LANGUAGES,
    language_for,
)
from code_compass_server.lsp.features.documents import document_path, file_uri
from code_compass_server.lsp.features.inert import inert_markdown
from code_compass_server.records import SymbolDef
from code_compass_server.symbols.identifiers import identifier_at
from code_compass_server.symbols.mentions import (
    Mention,
    Subject,
    TextCache,
    is_definition_chunk,
    locate_all,
)
from code_compass_server.symbols.resolve import Resolution, Target, shared_resolver

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

# Evidence is read until this much time has gone (then the hover shows what it has): the
# hover budget holds on large repositories, where a name's passages span many files.
EVIDENCE_BUDGET_S = 0.008
EVIDENCE_MIN_HITS = 4  # passages of each kind always read, however slow (a loaded machine too)


@dataclass(frozen=True, slots=True)
class Shown:
    """One definition as the hover shows it."""

    kind: str
    qualified_name: str
    path: str
    line: int
    signature: str
    language: str
    doc: str = ""


@dataclass(frozen=True, slots=True)
class HoverView:
    """What the hover says, before it becomes Markdown or plain text."""

    title: str
    defs: list[Shown]
    docs: list[Mention]
    code: list[Mention]
    note: str = ""  # "3 candidates by name", "defined outside the workspace: json.dumps"
    evidence: bool = True  # locals have none worth showing


class HoverFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls
        self.resolver = shared_resolver(ls)

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        # One pointer, one hover: a hover still queued when the next arrives is dropped.
        return await self.ls.run_blocking(self.compute_in_foreground, params, supersede="hover")

    def compute_in_foreground(self, params: types.HoverParams) -> types.Hover | None:
        with self.resolver.foreground():  # background parses and collections wait
            return self.compute(params)

    def compute(self, params: types.HoverParams) -> types.Hover | None:
        ls = self.ls
        engine = ls.require_engine()
        if not engine.settings.hover:
            return None
        path = document_path(params.text_document.uri)
        if path is None:
            return None
        found = engine.project_for_path(path)
        if found is None:
            return None
        project, rel = found
        source = ls.workspace.get_text_document(params.text_document.uri).source
        lines = source.split("\n")
        codec = ls.workspace.position_codec
        if params.position.line >= len(lines):
            return None
        pos = codec.position_from_client_units(lines, params.position)
        language = language_for(rel) or "text"
        word = identifier_at(lines[pos.line], pos.character, language)
        if word is None:
            return None
        root = ls.roots.get(project) or _root_of(path, rel)
        res = self.resolver.resolve(root, rel, language, source, pos.line, word.start)
        if res is not None and res.targets and all(t.local for t in res.targets):
            here = (rel, pos.line + 1, word.start)
            if any((t.path, t.line, t.column) == here for t in res.targets):
                return None  # a local's own binding: the hover would only repeat the line
        view = self.view(project, word.text, res)
        if view is None:
            return None
        markdown = _wants_markdown(ls)
        value = render(view, root, markdown=markdown)
        rng = types.Range(
            start=codec.position_to_client_units(lines, types.Position(pos.line, word.start)),
            end=codec.position_to_client_units(lines, types.Position(pos.line, word.end)),
        )
        kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
        return types.Hover(contents=types.MarkupContent(kind=kind, value=value), range=rng)

    def view(self, project: str, name: str, res: Resolution | None) -> HoverView | None:
        """The hover's content for `name` as resolved (or None: look it up by name)."""
        engine = self.ls.require_engine()
        if res is not None and res.is_outside:
            return HoverView(
                title=f"`{name}`", defs=[], docs=[], code=[],
                note=f"defined outside the workspace: `{res.outside}`", evidence=False,
            )  # fmt: skip
        if res is not None and res.targets:
            table = engine.symbols_named(name, project)
            shown = [_shown(t, table) for t in res.targets]
            local = all(t.local for t in res.targets)
            first = shown[0]
            title = f"**{first.kind}** `{first.qualified_name}`"
            if local:
                return HoverView(title, shown, [], [], evidence=False)
            subject = Subject(name, _qualifiers(res.targets))
            defs_for_filter = [s for s in table if any(s.path == t.path for t in res.targets)]
            docs, code = self._evidence(project, subject, defs_for_filter, res.targets, table)
            return HoverView(title, shown, docs, code)
        defs = engine.symbols_named(name, project)
        if not defs:
            return None
        shown = [
            Shown(d.kind, d.qualified_name, d.path, d.name_line, d.signature, d.language)
            for d in defs
        ]
        note = f"{len(defs)} candidate{'s' if len(defs) != 1 else ''} by name"
        title = f"**{defs[0].kind}** `{defs[0].qualified_name}`"
        subject = Subject(name, tuple(sorted({d.container for d in defs if d.container})))
        docs, code = self._evidence(project, subject, defs, (), defs)
        return HoverView(title, shown, docs, code, note=note)

    def _evidence(
        self,
        project: str,
        subject: Subject,
        defs: list[SymbolDef],
        targets: tuple[Target, ...],
        named: list[SymbolDef],
    ) -> tuple[list[Mention], list[Mention]]:
        engine = self.ls.require_engine()
        cache = TextCache(engine, project)
        docs: list[Mention] = []
        code: list[Mention] = []
        # Definitions of the name (this symbol's or another's) are not evidence about it.
        def_lines = {(d.path, d.name_line) for d in named}
        def_lines.update((t.path, t.line) for t in targets)
        deadline = time.perf_counter() + EVIDENCE_BUDGET_S
        read = {True: 0, False: 0}  # passages read, of documents and of code
        for hit in engine.mentions(subject.name, project, HOVER_MENTIONS_LIMIT):
            is_doc = hit.language in DOC_LANGUAGES
            if read[is_doc] >= EVIDENCE_MIN_HITS and time.perf_counter() > deadline:
                if min(read.values()) >= EVIDENCE_MIN_HITS:
                    break
                continue  # past the budget, the other kind still gets its passages
            # Only passages that can be evidence count toward the minimum: on a loaded machine
            # the definitions alone (ranked first) would use it up and leave no usage shown.
            if is_definition_chunk(hit, defs):
                continue
            if hit.language not in DOC_LANGUAGES and hit.language not in CODE_LANGUAGES:
                continue  # configuration and scripts: the word, not a use of the symbol
            read[is_doc] += 1
            bucket = docs if hit.language in DOC_LANGUAGES else code
            if len(bucket) >= HOVER_EVIDENCE_PER_KIND:
                continue
            for mention in locate_all(hit, subject, cache):
                if (mention.path, mention.line) in def_lines:
                    continue
                if not any(m.path == mention.path and m.line == mention.line for m in bucket):
                    bucket.append(mention)
                break
            if len(docs) >= HOVER_EVIDENCE_PER_KIND and len(code) >= HOVER_EVIDENCE_PER_KIND:
                break
        return docs, code


def _qualifiers(targets: tuple[Target, ...]) -> tuple[str, ...]:
    out: set[str] = set()
    for t in targets:
        parts = t.full_name.split(".")[:-1]
        out.update(p for p in parts[-2:] if p)
    return tuple(sorted(out))


def _shown(t: Target, table: list[SymbolDef]) -> Shown:
    """A resolved target, with the symbol table's kind and signature where it has them."""
    row = next((d for d in table if d.path == t.path and d.name_line == t.line), None)
    if row is not None:
        return Shown(
            row.kind, row.qualified_name, t.path, t.line, row.signature, row.language, t.doc_summary
        )
    parts = t.full_name.split(".")
    qualified = ".".join(parts[-2:]) if len(parts) >= 2 and t.kind != "statement" else t.name
    kind = {"statement": "variable", "instance": "variable", "param": "parameter"}.get(
        t.kind, t.kind
    )
    language = language_for(t.path) or "text"
    return Shown(kind, qualified, t.path, t.line, t.signature, language, t.doc_summary)


def _wants_markdown(ls: CodeCompassServer) -> bool:
    caps = ls.protocol.client_capabilities
    td = getattr(caps, "text_document", None) if caps else None
    hover = getattr(td, "hover", None) if td else None
    formats = getattr(hover, "content_format", None) if hover else None
    return not formats or types.MarkupKind.Markdown in formats


def _root_of(path: Path, rel: str) -> Path:
    parts = len(Path(rel).parts)
    return path.resolve().parents[parts - 1] if parts else path


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|<>~])")


def _md_escape(text: str) -> str:
    """For text inside a code span: only backticks could break out of it."""
    return text.replace("`", "'")


def _md_text(text: str) -> str:
    """Indexed text shown as Markdown is data: escape everything Markdown would act on
    (links, images, emphasis; `__init__.py` must not turn bold); bare URLs go in code spans."""
    return inert_markdown(text, lambda part: _MD_SPECIAL.sub(r"\\\1", part))


class _Links:
    """Reference-style links: the text reads `path:line` even where links are not rendered;
    the URLs wait at the end."""

    def __init__(self, root: Path, markdown: bool) -> None:
        self.root = root
        self.markdown = markdown
        self.targets: list[str] = []

    def link(self, rel: str, line: int, paged: bool = False) -> str:
        label = f"{rel}:{line}" if not paged else f"{rel} (page {line})"
        if not self.markdown:
            return label
        self.targets.append(file_uri(self.root, rel) + ("" if paged else f"#L{line}"))
        return f"[`{_md_escape(label)}`][{len(self.targets)}]"

    def footer(self) -> list[str]:
        return [f"[{i}]: <{url}>" for i, url in enumerate(self.targets, start=1)]


def render(view: HoverView, root: Path, *, markdown: bool = True) -> str:
    """The hover's text: definitions (links + signatures + doc summary), then evidence."""
    links = _Links(root, markdown)
    md = markdown
    out: list[str] = []
    title = view.title if md else view.title.replace("**", "").replace("`", "")
    note = view.note if md else view.note.replace("`", "")
    out.append(f"{title} — {note}" if note else title)
    for d in view.defs[:HOVER_MAX_DEFINITIONS]:
        out.append("")
        out.append(f"Defined at {links.link(d.path, d.line)}")
        if d.signature:
            sig = d.signature.strip()
            out.append(f"```{d.language}\n{sig}\n```" if md else f"    {sig}")
        if d.doc:
            out.append(_md_text(d.doc) if md else d.doc)
    if len(view.defs) > HOVER_MAX_DEFINITIONS:
        out.append(f"\n…and {len(view.defs) - HOVER_MAX_DEFINITIONS} more definitions")
    rule = "\n---\n" if md else "\n"
    if view.docs:
        out.append(f"{rule}{'**Mentioned in the docs**' if md else 'Mentioned in the docs'}\n")
        for m in view.docs:
            paged = m.language in PAGED_LANGUAGES
            snippet = _md_text(m.snippet) if md else m.snippet
            out.append(f"- {links.link(m.path, m.line, paged)} — {snippet}")
    if view.code:
        out.append(f"{rule}{'**Used in the code**' if md else 'Used in the code'}\n")
        for m in view.code:
            snippet = f"`{_md_escape(m.snippet)}`" if md else m.snippet
            out.append(f"- {links.link(m.path, m.line)} — {snippet}")
    if view.evidence and not view.docs and not view.code:
        name = view.title.rsplit("`", 2)[-2] if "`" in view.title else view.title
        out.append(f"{rule}_No passage in this workspace mentions `{name}` yet._")
    footer = links.footer()
    if footer:
        out.append("")
        out.extend(footer)
    return "\n".join(out)
