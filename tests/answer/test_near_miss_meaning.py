"""A missing name's neighbour by meaning as well as spelling, and what a question's own code
does not ask about (answer/absent.py, answer/near_names.py, answer/name_meaning.py), over the
real engine on real Python, TypeScript and click files, offline:
- words of the same meaning (`delete_key` -> `unset_key`, where `set_key` and `get_key` share
  as much spelling), with the engine's embedding model;
- the same words inflected (`trackNodeLocations` -> `nodeLocationTracking`);
- a receiver named like a package is that package (`envfile.delete_key`), not a class spelled
  like it;
- an owner the index does not define (the writer's own subclass) leaves the option to be
  chosen as a bare name;
- a CLI flag is checked against the command's declared options and cites them;
- the writer's own values (a variable passed to a call, `${DB_HOST}` in their .env line) are
  never said absent nor refused as unknown symbols."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_compass_server.answer import AskRequest, ask
from code_compass_server.answer.near_names import bare_names, likeness, writer_values
from code_compass_server.engine import Engine
from tests.answer.conftest import indexed_engine, nearest_of_absent

README_MD = """\
# envfile

Read and write .env files.

## Command-line interface

`envfile run python app.py` runs a command with the variables of the .env file in its
environment, printing nothing of its own: the environment it would pass is the command's.

## Load configuration without altering the environment

`dotenv_values` returns the variables as a dict instead of putting them in the environment.
"""

ENVFILE_MAIN_PY = '''\
"""Read and write .env files."""


def get_key(path, key_to_get):
    """Get the value of a given key from the given .env file."""
    return None


def set_key(path, key_to_set, value_to_set, quote_mode="always"):
    """Adds or updates a key/value in the given .env file."""
    return True, key_to_set, value_to_set


def unset_key(path, key_to_unset, quote_mode="always"):
    """Removes a given key from the given .env file."""
    return None, key_to_unset


def dotenv_values(path, interpolate=True):
    """Parse a .env file and return its content as a dict; ${VAR} is expanded."""
    return {}
'''

ENVFILE_INIT_PY = """\
from envfile.main import dotenv_values, get_key, set_key, unset_key
"""

ENVFILE_IPYTHON_PY = '''\
class IPythonEnvFile:
    """The %envfile magic of IPython."""

    def envfile(self, line):
        """Load the .env file named on the magic's line."""
        return line
'''

ENVFILE_CLI_PY = '''\
import click


@click.group()
def cli():
    """Work with .env files from the shell."""


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option("--override/--no-override", default=True, help="Override variables.")
@click.argument("commandline", nargs=-1, type=click.UNPROCESSED)
def run(override, commandline):
    """Run a command with the variables of the .env file set."""
    return run_command(commandline, {})


def run_command(command, env):
    """Replace the current process with the command."""
    return 0
'''

TREE_BUILDER_TS = """\
export class TreeBuilder {
  nodeLocationTracking: string;

  initTreeBuilder(config: IParserConfig) {
    // how much of a node's location is recorded: "none", "onlyOffset" or "full"
    this.nodeLocationTracking = config.nodeLocationTracking ?? "none";
  }
}

export interface IParserConfig {
  nodeLocationTracking?: string;
  recoveryEnabled?: boolean;
}
"""

CST_TS = """\
export function setNodeLocationOnlyOffset(location: CstNodeLocation, token: IToken): void {
  location.startOffset = token.startOffset;
}

export function setNodeLocationFull(location: CstNodeLocation, token: IToken): void {
  location.startOffset = token.startOffset;
  location.startLine = token.startLine;
}
"""

RECOGNIZER_TS = """\
export class RecognizerApi {
  /** Tries a rule on the next tokens, consuming them. */
  SUBRULE(rule: Rule, args?: unknown[]): unknown {
    return rule.apply(this, args);
  }

  BACKTRACK(rule: Rule, args?: unknown[]): () => boolean {
    // a speculative run: the rule is tried and the tokens it read are given back
    return function () {
      const saved = this.saveRecogState();
      try {
        rule.apply(this, args);
        return true;
      } finally {
        this.reloadRecogState(saved);
      }
    };
  }
}
"""

VISITOR_TS = """\
export class CstVisitor {
  /** Visits a node of the tree, or the first of an array of them. */
  visit(cstNode: CstNode | CstNode[], param?: unknown): unknown {
    if (Array.isArray(cstNode)) {
      cstNode = cstNode[0];
    }
    if (cstNode === undefined) {
      return undefined;
    }
    return this[cstNode.name](cstNode.children, param);
  }
}
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    files = {
        "README.md": README_MD,
        "src/envfile/__init__.py": ENVFILE_INIT_PY,
        "src/envfile/main.py": ENVFILE_MAIN_PY,
        "src/envfile/ipython.py": ENVFILE_IPYTHON_PY,
        "src/envfile/cli.py": ENVFILE_CLI_PY,
        "src/parse/tree_builder.ts": TREE_BUILDER_TS,
        "src/parse/cst.ts": CST_TS,
        "src/parse/visitor.ts": VISITOR_TS,
        "src/parse/recognizer_api.ts": RECOGNIZER_TS,
    }
    eng = indexed_engine(tmp_path_factory.mktemp("meaning"), files)
    yield eng
    eng.close()


def _model(engine: Engine) -> None:
    if engine.embed_texts(["probe"]) is None:
        pytest.skip("the embedding model is not built (scripts/setup builds models/build)")


@pytest.mark.parametrize(
    "question",
    [
        "how do I remove a variable from a .env file with envfile.delete_key?",
        "como removo uma variável do .env com o envfile.delete_key?",
    ],
)
def test_a_name_of_the_same_meaning_before_ones_spelled_as_alike(
    engine: Engine, question: str
) -> None:
    # `set_key`, `get_key` and `unset_key` each share `key`; "delete" means "unset". The
    # package `envfile` is the owner, not the method `IPythonEnvFile.envfile`.
    _model(engine)
    assert nearest_of_absent(question, engine, "delete_key")["symbol"] == "unset_key"


def test_inflected_words_are_the_same_words() -> None:
    assert likeness("trackNodeLocations", "nodeLocationTracking") == 1.0
    assert likeness("trackNodeLocations", "setNodeLocationOnlyOffset") < 0.5


@pytest.mark.parametrize(
    "question",
    [
        "if I set trackNodeLocations: true on my parser, does every node get its offsets?",
        "se eu colocar trackNodeLocations: true no parser, todo nó ganha os offsets?",
    ],
)
def test_a_name_with_its_words_inflected_cites_that_name(engine: Engine, question: str) -> None:
    assert nearest_of_absent(question, engine, "trackNodeLocations")["path"] == (
        "src/parse/tree_builder.ts"
    )


def test_an_option_of_the_writer_s_own_class_is_chosen_as_a_bare_name(engine: Engine) -> None:
    # `MyParser` is the writer's subclass: nothing in the index to read its options from.
    question = "does `new MyParser(tokens, { locationTracking: true })` record node locations?"
    assert nearest_of_absent(question, engine, "locationTracking")["path"] == (
        "src/parse/tree_builder.ts"
    )


@pytest.mark.parametrize(
    "question",
    [
        "how do I use `this.SPECULATE(this.someRule)` to try a rule without consuming tokens?",
        "como uso `this.SPECULATE(this.someRule)` pra testar uma regra sem consumir tokens?",
    ],
)
def test_a_one_word_name_cites_the_definition_saying_its_word(
    engine: Engine, question: str
) -> None:
    # No name is spelled like `SPECULATE`; `BACKTRACK`'s own comment says "speculative".
    near = nearest_of_absent(question, engine, "SPECULATE")
    assert near["symbol"] == "RecognizerApi.BACKTRACK", near


@pytest.mark.parametrize(
    "question",
    [
        "will `envfile run --dry-run python app.py` only show the environment it would pass, "
        "without executing the command?",
        "o `envfile run --dry-run python app.py` só mostra o ambiente que passaria, sem "
        "executar o comando?",
    ],
)
def test_a_cli_flag_the_command_does_not_declare_cites_the_command(
    engine: Engine, question: str
) -> None:
    # Not the README's section on the command line, nor a helper spelled like `run`: the
    # command declaring the real flags, listed.
    near = nearest_of_absent(question, engine, "--dry-run")
    assert near["path"] == "src/envfile/cli.py" and near["symbol"] == "run", near
    assert "`--override/--no-override`" in ask(AskRequest(question), engine).answer


def test_a_declared_cli_flag_is_not_absent(engine: Engine) -> None:
    ans = ask(AskRequest("what does `envfile run --no-override app` keep?"), engine)
    assert ans.to_json()["absent"] == [], ans.answer


def test_the_writer_s_values_are_read_from_the_question() -> None:
    assert writer_values("can I call this.visit(ctx.expression) on an array?") == {"expression"}
    assert "DB_HOST" in writer_values("how is `URL=${DB_HOST:-localhost}` resolved?")
    # A constant or type passed, a keyword, a call: the library's, asked about.
    assert writer_values("decor.Elapsed(decor.ET_STYLE_SECONDS)") == set()
    assert writer_values("f(x=1, g())") == set()
    assert bare_names("is textfmt.use_locale('de_DE') global?") == [("use_locale", "textfmt")]


@pytest.mark.parametrize(
    "question",
    [
        "in a CST visitor, can I call this.visit(ctx.expression) when it's an array?",
        "num visitor da CST, posso chamar this.visit(ctx.expression) quando é um array?",
        "how is `URL=${DB_HOST:-localhost}` expanded by dotenv_values, and which wins: a "
        "DB_HOST set earlier in the same file or the environment's?",
    ],
)
def test_the_writer_s_own_values_are_never_absent_nor_unknown(
    engine: Engine, question: str
) -> None:
    ans = ask(AskRequest(question, min_score=0.0), engine)
    assert ans.to_json()["absent"] == [], ans.answer
    assert "exists nowhere" not in ans.answer and "não existe" not in ans.answer, ans.answer
