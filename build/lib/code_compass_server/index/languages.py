"""Which files Code Compass reads, and the language id each one gets.

The allow-list is generous on purpose (source code of common languages, config and
text formats) but leaves out data dumps, translation catalogs and binaries: anything
not listed here is skipped as "unsupported_type".
"""

from __future__ import annotations

import posixpath

# Languages chunked by tree-sitter into symbols; everything else uses windows/sections.
CODE_LANGUAGES = frozenset({"python", "typescript", "tsx", "javascript", "go", "java", "rust"})
# Documents (prose): the "doc" category of the index, "doc references" in lenses, the
# documents half of a hover; chunked by sections or paragraphs, never by symbols.
# A file matched by the `documentGlobs` setting gets "text".
DOC_LANGUAGES = frozenset({"markdown", "text", "rst", "asciidoc", "latex", "pdf"})
# Prose chunked by paragraphs.
PARAGRAPH_LANGUAGES = frozenset({"text", "rst"})
# Documents whose chunk lines are page numbers: nothing to re-read at a line.
PAGED_LANGUAGES = frozenset({"pdf"})
# Configuration formats: their own category, so questions about code rank code first.
CONFIG_LANGUAGES = frozenset({"yaml", "toml", "json", "ini", "xml"})

_EXTENSIONS: dict[str, str] = {
    # tree-sitter languages
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    # other source code (line windows)
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".m": "objc",
    ".mm": "objc",
    ".lua": "lua",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".jl": "julia",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".vue": "vue",
    ".svelte": "svelte",
    ".zig": "zig",
    ".nim": "nim",
    ".v": "verilog",
    ".sv": "verilog",
    ".vhd": "vhdl",
    ".sol": "solidity",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".tf": "terraform",
    ".hcl": "hcl",
    ".cmake": "cmake",
    ".pyx": "cython",
    ".pxd": "cython",
    # shells and scripts
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".fish": "shell",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".bat": "batch",
    ".cmd": "batch",
    # web, data and config formats
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".css": "css",
    ".scss": "scss",
    ".sass": "scss",
    ".less": "less",
    ".sql": "sql",
    ".json": "json",
    ".jsonc": "json",
    ".json5": "json",
    ".ipynb": "json",  # notebooks: cells, and secrets pasted into them, are text like any JSON
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".properties": "ini",
    ".xml": "xml",
    ".xsd": "xml",
    ".svg": "xml",
    ".csv": "csv",
    ".tsv": "csv",
    ".mk": "make",
    ".dockerfile": "dockerfile",
    ".j2": "jinja",
    ".jinja": "jinja",
    ".jinja2": "jinja",
    ".tpl": "template",
    ".tmpl": "template",
    # prose
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".text": "text",
    ".adoc": "asciidoc",
    ".tex": "latex",
    ".pdf": "pdf",
}

# Files known by their whole name (lower-cased).
_FILENAMES: dict[str, str] = {
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "jenkinsfile": "groovy",
    "vagrantfile": "ruby",
    "gemfile": "ruby",
    "rakefile": "ruby",
    "procfile": "text",
    "cmakelists.txt": "cmake",
    "justfile": "make",
    ".gitignore": "text",
    ".gitattributes": "text",
    ".dockerignore": "text",
    ".editorconfig": "ini",
    ".bashrc": "shell",
    ".profile": "shell",
}

# Extension-less prose files (README, LICENSE, ...), matched on the stem.
_PROSE_STEMS = frozenset(
    {
        "readme",
        "license",
        "licence",
        "copying",
        "authors",
        "contributors",
        "changelog",
        "changes",
        "history",
        "news",
        "notice",
        "todo",
        "install",
        "contributing",
        "security",
        "code_of_conduct",
    }
)


def language_for(rel: str) -> str | None:
    """Language id for a workspace-relative path, or None when the file is not indexed."""
    name = posixpath.basename(rel).lower()
    by_name = _FILENAMES.get(name)
    if by_name is not None:
        return by_name
    if name.startswith("dockerfile.") or name.endswith(".dockerfile"):
        return "dockerfile"
    stem, ext = posixpath.splitext(name)
    if ext:
        lang = _EXTENSIONS.get(ext)
        if lang is not None:
            return lang
    # README, LICENSE.rst-less variants like "LICENSE" or "README.en"
    if stem in _PROSE_STEMS or name in _PROSE_STEMS:
        return "text"
    return None
