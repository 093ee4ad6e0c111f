"""The name channel: a query naming a defined symbol gets its definition first, in every mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_compass_server.constants import DEFAULT_MIN_SCORE
from code_compass_server.engine import Engine
from code_compass_server.search.names import NameRef, phrase_names, place, query_names
from code_compass_server.settings import EngineSettings
from code_compass_server.validation import validate_search
from tests.conftest import write_tree
from tests.search.helpers import cand, row

GLOBALS = '''from __future__ import annotations

import typing as t

from werkzeug.local import LocalProxy

if t.TYPE_CHECKING:
    from .app import Flask

    class GetKwargs(t.TypedDict):
        default: str
        silent: bool


_no_app_msg = """Working outside of application context."""
AppContextProxy = LocalProxy
current_app: Flask = LocalProxy(_cv_app, "app", unbound_message=_no_app_msg)
request_ctx = LocalProxy(_cv_request, unbound_message="no request")
g = LocalProxy(_cv_app, "g")
'''

STORE = '''"""A tiny key-value store."""


class Store:
    """Keeps values in memory."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def update(self, key: str, value: str) -> None:
        """Store a value under a key, replacing the old one."""
        self.values[key] = value

    def lookup(self, key: str) -> str | None:
        return self.values.get(key)


def refresh(store: Store) -> None:
    """Call update for every key (the store uses update to write)."""
    for key in list(store.values):
        store.update(key, store.lookup(key) or "")


_DEFAULT_TIMEOUT_CONFIG = 5.0
'''

LIMITS_GO = """package limits

// Retry policy.
const (
	MaxRetries = 5
	backoffMillis = 250
)

// Retry runs f until it succeeds or MaxRetries attempts have failed.
func Retry(f func() error) error {
	var err error
	for i := 0; i < MaxRetries; i++ {
		if err = f(); err == nil {
			return nil
		}
	}
	return err
}
"""

TYPES_TS = """/** What a request may set. */
export interface RequestOptions {
  timeout?: number;
  retries?: number;
}

export type Handler = (options: RequestOptions) => void;

export function send(options: RequestOptions, handler: Handler): void {
  handler(options);
}

export class Channel {
  /** Set once the channel has completed or errored. */
  protected isStopped = false;
  closed: boolean;

  constructor() {
    this.closed = false;
  }

  stop(): void {
    this.isStopped = true;
  }
}
"""

CLI = '''"""Command line of the store."""
import sys

DEFAULT_PORT = 8080
ENV_PREFIX: str = "FLASKY_"


def lookup(name: str) -> str:
    """Find a command by name (the store's lookup method finds values)."""
    return name


def main(argv: list[str] | None = None) -> int:
    """Run a command: lookup, serve on DEFAULT_PORT, exit."""
    print(lookup((argv or sys.argv)[0]), DEFAULT_PORT, ENV_PREFIX)
    return 0
'''

# The same constant in two locales: `module.name` must pick the module it names.
FORMATS_IT = 'DATE_FORMAT = "d F Y"\nTIME_FORMAT = "H:i"\n'
FORMATS_AR = 'DATE_FORMAT = "j F، Y"\nTIME_FORMAT = "g:i A"\n'

# One name defined in a package and in a deeper module: the package is where `import` finds it.
TRANS_INIT = "from .trans_real import gettext, lazy\n\ngettext_lazy = lazy(gettext, str)\n"
TRANS_NULL = (
    '"""No translation: gettext_lazy returns the text as is."""\n\n\n'
    "def gettext(message):\n    return message\n\n\ngettext_lazy = gettext  # gettext_lazy\n"
)

USES = '''"""Uses of the names, more of them than the definitions have."""
from .globals import AppContextProxy, GetKwargs, current_app


def proxy_of_app() -> AppContextProxy:
    # AppContextProxy AppContextProxy: the app proxy, GetKwargs for the options
    kwargs: GetKwargs = {"default": "", "silent": True}
    return current_app if kwargs else AppContextProxy(None)
'''

README = """# demo

The `update` method of the store replaces a value; `AppContextProxy` wraps the current app.
Use `GetKwargs` to pass lookup options. `MaxRetries` limits retries; `Handler` handles requests.
"""

FILES: dict[str, str | bytes] = {
    "src/flasky/globals.py": GLOBALS,
    "src/flasky/store.py": STORE,
    "src/flasky/uses.py": USES,
    "limits/limits.go": LIMITS_GO,
    "web/types.ts": TYPES_TS,
    "src/flasky/cli.py": CLI,
    "src/flasky/locale/ar/formats.py": FORMATS_AR,
    "src/flasky/locale/it/formats.py": FORMATS_IT,
    "src/flasky/translation/__init__.py": TRANS_INIT,
    "src/flasky/translation/trans_null.py": TRANS_NULL,
    "README.md": README,
}

MODES = ("lexical", "semantic", "hybrid")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("names")
    eng = Engine.open(root / "storage", EngineSettings(embeddings=True))
    try:
        eng.add_project(write_tree(root / "ws", FILES))
        eng.index(embed=True)
        yield eng
    finally:
        eng.close()


@pytest.mark.parametrize(
    ("query", "path", "line"),
    [
        ("where is AppContextProxy defined", "src/flasky/globals.py", 16),
        ("where is GetKwargs defined?", "src/flasky/globals.py", 10),
        ("where is update defined", "src/flasky/store.py", 10),
        ("onde o update é definido?", "src/flasky/store.py", 10),
        ("Store.update", "src/flasky/store.py", 10),
        ("where is MaxRetries defined", "limits/limits.go", 5),
        ("Handler type", "web/types.ts", 7),
        ("where is the RequestOptions interface declared?", "web/types.ts", 2),
        ("onde fica a interface RequestOptions?", "web/types.ts", 2),
        # A module-level constant, bare, asked about in words and in Portuguese.
        ("DEFAULT_PORT", "src/flasky/cli.py", 4),
        ("where is the ENV_PREFIX constant", "src/flasky/cli.py", 5),
        ("onde fica a constante DEFAULT_PORT", "src/flasky/cli.py", 4),
        # A TypeScript class field: a symbol, though not a chunk of its own.
        ("where is isStopped defined?", "web/types.ts", 15),
        ("Channel.closed", "web/types.ts", 16),
        # The kind the question names picks among definitions of one name.
        ("where is the lookup method", "src/flasky/store.py", 14),
        ("where's the lookup function?", "src/flasky/cli.py", 8),
        ("onde fica o método lookup", "src/flasky/store.py", 14),
        ("implementation of lookup", "src/flasky/cli.py", 8),
        # A weak word is a name where the question says so.
        ("where is main defined?", "src/flasky/cli.py", 13),
        # `module.name`: the module the dotted path names, not any file of that stem.
        ("flasky.locale.it.formats.TIME_FORMAT", "src/flasky/locale/it/formats.py", 2),
        ("it.formats.TIME_FORMAT", "src/flasky/locale/it/formats.py", 2),
        ("where is ar.formats.TIME_FORMAT defined", "src/flasky/locale/ar/formats.py", 2),
        ("where is gettext_lazy defined", "src/flasky/translation/__init__.py", 3),
    ],
)
def test_a_named_definition_comes_first_in_every_mode(
    engine: Engine, query: str, path: str, line: int
) -> None:
    for mode in MODES:
        hits = engine.search(validate_search(query, 5, mode=mode))
        assert hits, (mode, query)
        top = hits[0]
        assert (top.path, top.start_line <= line <= top.end_line) == (path, True), (
            mode,
            query,
            [(h.path, h.start_line, h.end_line, h.score) for h in hits],
        )
        assert top.score >= DEFAULT_MIN_SCORE, (mode, query, top.score)
        assert top.signals.get("exact_definition") == 1.0


def test_names_in_queries() -> None:
    def refs(q: str) -> list[tuple[str, str]]:
        return [(r.name, r.scope) for r in query_names(q).refs]

    assert refs("where is AppContextProxy defined") == [("AppContextProxy", "")]
    assert refs("where is update defined") == [("update", "")]
    assert refs("session_json_serializer") == [("session_json_serializer", "")]
    assert refs("where is attr.dataclass defined?") == [("dataclass", "attr")]
    assert refs("onde é definido o ParameterSource?") == [("ParameterSource", "")]
    assert refs("where is the `current_app` proxy defined?") == [("current_app", "")]
    assert refs("class Blueprint") == [("Blueprint", "")]
    # Plain words are names only where the question's shape says so.
    assert refs("how does the store update values?") == []
    assert refs("where is the default timeout set?") == []
    # Shapes that say a plain word is a name, with the kind they ask for.
    assert refs("where is the url_for method") == [("url_for", "")]
    assert refs("where's the escape function?") == [("escape", "")]
    assert refs("where is the class Config") == [("Config", "")]
    assert refs("implementation of asdict") == [("asdict", "")]
    assert refs("onde fica a classe Response?") == [("Response", "")]
    assert refs("onde está definida a função escape") == [("escape", "")]
    assert refs("onde é definida a classe Response") == [("Response", "")]
    assert refs("onde fica o atributo userinfo?") == [("userinfo", "")]
    assert refs("where is main defined?") == [("main", "")]
    assert refs("main") == [("main", "")]
    assert refs("where is the main loop?") == []  # `main` only where said to be a name
    assert query_names("where is the url_for method").kinds == {"method", "constructor"}
    assert query_names("onde fica a classe Response?").kinds == {"class", "struct"}
    assert query_names("how does the class cache values?").kinds == frozenset()
    assert query_names("where is update defined").navigation
    assert not query_names("why does `update` replace the old value?").navigation
    assert query_names("why does `update` replace the old value?").refs == (NameRef("update"),)


def test_a_conceptual_question_keeps_the_model_order() -> None:
    doc = cand(row("doc", "README.md", kind="section", category="doc"), score=0.9)
    code = cand(row("code", "src/a.py", 10, 12), score=0.7)
    found = cand(row("code", "src/a.py", 10, 12), score=0.0)
    found.name_match = 1.0
    missing = cand(row("other", "src/b.py", 1, 3), score=0.0)
    missing.name_match = 1.0
    ranked = place([doc, code], [found, missing], navigation=False)
    assert [c.row.id for c in ranked] == ["doc", "code"]  # flagged, not moved, nothing added
    assert ranked[1].exact_definition and ranked[1].score == 0.7
    nav = place([cand(doc.row, score=0.9), cand(code.row, score=0.7)], [found], navigation=True)
    assert [c.row.id for c in nav] == ["code", "doc"]
    assert nav[0].score >= 0.9


def test_hybrid_is_not_worse_than_lexical_on_where_defined(engine: Engine) -> None:
    for name in ("AppContextProxy", "GetKwargs", "update", "MaxRetries", "current_app"):
        ranks = {}
        for mode in ("lexical", "hybrid"):
            hits = engine.search(validate_search(f"where is {name} defined", 10, mode=mode))
            ranks[mode] = next(i for i, h in enumerate(hits) if h.signals.get("exact_definition"))
        assert ranks["hybrid"] <= ranks["lexical"], (name, ranks)


def test_phrases_spell_identifiers() -> None:
    three, two, prefixes = phrase_names(("default", "runserver", "port"))
    assert "default_port" in two and "defaultport" in two  # one word may sit between
    assert "_default_port" in two  # a private name too
    assert "default_runserver_port" in three
    assert "port_default" in phrase_names(("port", "default"))[1]  # a rendered "porta padrão"
    assert "default_runserver_" in prefixes
    assert "validate_password" in phrase_names(("validate", "passwords"))[1]  # a plural's singular
    # Only a navigation question's words are read, from the English text.
    assert query_names("how does the store update values?").words == ()
    names = query_names("onde é definido o timeout padrão?", "where define timeout default")
    assert names.words == (("timeout", "default"),)


def test_a_phrase_finds_the_constant_it_spells(engine: Engine) -> None:
    for query in ("where is the default timeout config set?", "onde fica o timeout padrão?"):
        hits = engine.search(validate_search(query, 5, mode="hybrid"))
        assert hits and hits[0].path == "src/flasky/store.py", (query, hits)
        top = hits[0]
        assert top.start_line <= 24 <= top.end_line and top.signals.get("exact_definition") == 1.0
