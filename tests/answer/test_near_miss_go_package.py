"""A Go receiver names a package by its clause, not by a folder's name (answer/go_packages.py,
answer/absent.py), over the real engine on a small Go module laid out as libraries often are:
`package token` at the root, and a command in `cmd/token/` that is `package main`. A missing
option written on the package (`token.WithAudiences`) cites the package's real option
(`WithAudience`), never the command's `main` or its README."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_compass_server.answer.go_packages import go_package_clause
from code_compass_server.engine import Engine
from tests.answer.conftest import indexed_engine, nearest_of_absent

OPTIONS_GO = """\
package token

import "time"

// ParserOption configures a Parser.
type ParserOption func(*Parser)

// WithAudience requires the token's audience to contain aud.
func WithAudience(aud string) ParserOption {
\treturn func(p *Parser) { p.audience = aud }
}

// WithIssuedAt checks the issued-at claim: a token issued in the future is rejected.
func WithIssuedAt() ParserOption {
\treturn func(p *Parser) { p.verifyIat = true }
}

// WithLeeway allows a margin of time when checking expiry.
func WithLeeway(leeway time.Duration) ParserOption {
\treturn func(p *Parser) { p.leeway = leeway }
}
"""

PARSER_GO = """\
// Copyright the authors.

package token

import "time"

// Parser parses and validates tokens.
type Parser struct {
\taudience  string
\tverifyIat bool
\tleeway    time.Duration
}

// NewParser returns a parser with the options applied.
func NewParser(options ...ParserOption) *Parser {
\tp := &Parser{}
\tfor _, option := range options {
\t\toption(p)
\t}
\treturn p
}
"""

CMD_MAIN_GO = """\
package main

import (
\t"flag"
\t"fmt"
\t"os"
)

var flagAudience = flag.String("aud", "", "audience the token must contain")

// main signs or verifies a token read from stdin with the token package.
func main() {
\tflag.Parse()
\tif *flagAudience == "" {
\t\tfmt.Fprintln(os.Stderr, "token: -aud is required")
\t\tos.Exit(2)
\t}
\tfmt.Println("verifying token for audience", *flagAudience)
}
"""

CMD_README_MD = """\
# `token` command-line tool

A small tool to sign and verify tokens with the token package: pass the audience with -aud.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    files = {
        "go.mod": "module example.com/token\n\ngo 1.22\n",
        "options.go": OPTIONS_GO,
        "parser.go": PARSER_GO,
        "cmd/token/main.go": CMD_MAIN_GO,
        "cmd/token/README.md": CMD_README_MD,
    }
    eng = indexed_engine(tmp_path_factory.mktemp("gopkg"), files)
    yield eng
    eng.close()


def test_the_package_clause_is_read_after_comments() -> None:
    assert go_package_clause(PARSER_GO) == "token"
    assert go_package_clause("//go:build linux\n\n/* a\nb */\npackage sys\n") == "sys"
    assert go_package_clause(CMD_MAIN_GO) == "main"
    assert go_package_clause("# not go\n") is None


@pytest.mark.parametrize(
    ("question", "missing", "neighbour"),
    [
        (
            'If I pass two values to `token.WithAudiences("api", "admin")`, must the token '
            "contain both audiences?",
            "WithAudiences",
            "WithAudience",
        ),
        (
            "Does `token.WithIssuedAtRequired()` also reject tokens issued in the future?",
            "WithIssuedAtRequired",
            "WithIssuedAt",
        ),
        (
            "o `token.WithIssuedAtRequired()` também rejeita token emitido no futuro?",
            "WithIssuedAtRequired",
            "WithIssuedAt",
        ),
    ],
)
def test_a_missing_option_of_a_go_package_cites_the_package_not_a_command_named_like_it(
    engine: Engine, question: str, missing: str, neighbour: str
) -> None:
    nearest = nearest_of_absent(question, engine, missing)
    assert not nearest["path"].startswith("cmd/"), nearest
    assert nearest["symbol"] == neighbour, nearest
