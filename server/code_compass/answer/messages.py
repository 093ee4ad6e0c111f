"""Everything an answer tells the user in words, in English and Portuguese (one catalogue).

The answer follows the question's language (docs/rules.md: answer-language): the fixed
refusals, the caveats, the suggestions and the extractive answer's framing come from the
catalogue of the language `query.question_language` found; any other language, or none
found, reads English. Rule names (`confidence.rules`) and `meta` stay English: they are
identifiers clients and logs match on, not prose.

Templates use str.format fields; each field's meaning is given where the message is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Messages:
    language: str
    # Refusals (grounds.py)
    no_evidence: str
    no_evidence_failure: str  # {stale}: stale_dropped or ""
    stale_dropped: str  # {n}
    unknown_symbol: str  # {names}
    not_in_index: str  # {names}
    # Step caveats
    low_coverage: str
    reread: str  # {parts}
    reread_dropped: str  # {n} {items}
    reread_moved: str  # {n} {items}
    extractive_caveat: str
    llm_retry: str  # one retry
    llm_retries: str  # {n} retries
    llm_failed: str  # {error}
    verification: str  # {flags}
    answer_with_care: str  # {score}
    ambiguity_resolved: str  # {name} {n} {where} {best}
    ambiguity_unresolved: str  # {name} {n} {where}
    # Verification flags
    flag_removed: str  # {ids}
    flag_uncited: str  # {n}
    flag_identifiers: str  # {names}
    flag_paths: str  # {paths}
    flag_language: str  # {answer} {question}
    # The extractive answer (extractive.py)
    extractive_label: str
    extractive_intro: str  # follows the label on the first line
    extractive_item: str  # {kind}{name} {where}{gist} {id}: kind and name end with a space
    extractive_footer: str
    kinds: dict[str, str] = field(default_factory=dict)  # evidence kinds, as named in prose
    reasons: dict[str, str] = field(default_factory=dict)  # why re-read dropped a hit
    # Suggestions (suggestions.py)
    spelling: str = ""  # {word} {fixed} {where}: where is " (path)" or ""
    did_you_mean: str = ""  # {term} {where}
    closest_match: str = ""  # {name} {path} {start} {end} {score} {min_score} {floor}
    drop_language: str = ""  # {language} {languages}
    remove_prefix: str = ""  # {prefix} {path}
    narrow: str = ""  # {prefix}
    ask_by_name: str = ""  # {term}
    ask_about_symbol: str = ""  # {symbol} {path} {line}
    open_passage: str = ""  # {path} {start} {end}
    ask_about_path: str = ""  # {term}
    other_languages: str = ""  # the language filter dropped and no other language known
    generic: tuple[str, ...] = ()
    # Labels of the command line's answer footer (cli.py): states and coverage levels are the
    # contract's identifiers (OK, high, ...); these are how they read to a person.
    states: dict[str, str] = field(default_factory=dict)
    coverages: dict[str, str] = field(default_factory=dict)
    label_confidence: str = "confidence"
    label_coverage: str = "coverage"
    label_depth: str = "depth"
    label_score: str = "score"
    label_caveat: str = "caveat"
    label_suggestion: str = "try"


EN = Messages(
    language="en",
    no_evidence=(
        "Not enough evidence in the indexed code to answer. "
        "Try refining the question or adjusting the filters."
    ),
    no_evidence_failure="retrieval: no evidence above minScore{stale}",
    stale_dropped=" ({n} hit(s) dropped as stale)",
    unknown_symbol=(
        "Cannot answer from the indexed code: {names} exists nowhere in the index "
        "(no symbol or text matches it)."
    ),
    not_in_index="not in the index: {names}",
    low_coverage="retrieval: low coverage (weak or single evidence)",
    reread="re-read: {parts}",
    reread_dropped="{n} evidence(s) dropped ({items})",
    reread_moved="{n} evidence(s) re-located in edited files ({items})",
    extractive_caveat="answer: no LLM configured (set ANTHROPIC_API_KEY); extractive answer",
    llm_retry="llm: answered after 1 retry",
    llm_retries="llm: answered after {n} retries",
    llm_failed=(
        "No answer: {error}. The evidence found is listed below; "
        "try again later or check the API settings."
    ),
    verification="verification: {flags}",
    answer_with_care="confidence {score}/100 (70-89): answer with care",
    ambiguity_resolved=(
        "`{name}` is defined in {n} files ({where}); the best match, {best}, was preferred"
    ),
    ambiguity_unresolved=(
        "`{name}` is defined in {n} files with near-equal scores ({where}); "
        "name the file or use pathPrefix"
    ),
    flag_removed="removed citations to evidence never sent: {ids}",
    flag_uncited="{n} claim(s) without a citation",
    flag_identifiers="identifiers not in the cited evidence: {names}",
    flag_paths="paths not among the evidence: {paths}",
    flag_language="answer language '{answer}' differs from the question's '{question}'",
    extractive_label="Extractive answer (no LLM configured)",
    extractive_intro="Found in the index:",
    extractive_item="- {kind}{name}in {where}{gist} {id}",
    extractive_footer="Set ANTHROPIC_API_KEY for a written answer from these passages.",
    spelling="Check the spelling: `{word}` → `{fixed}`{where}",
    did_you_mean="Did you mean `{term}`{where}?",
    closest_match=(
        "The closest match is `{name}` in {path}:{start}-{end} (score {score}, below minScore "
        "{min_score}); lower minScore to {floor} to include it"
    ),
    drop_language="Drop the language filter '{language}': matches exist in {languages} files",
    remove_prefix="Remove pathPrefix '{prefix}': the closest matches are in {path}",
    narrow="Narrow with pathPrefix '{prefix}' (where the closest matches are)",
    ask_by_name="Ask about `{term}` by name: it is defined in the index",
    ask_about_symbol="Ask about `{symbol}` ({path}:{line}), the nearest indexed symbol",
    open_passage="Open {path}:{start}-{end}, the nearest indexed passage",
    ask_about_path="Ask about `{term}`: it is in the index and close to your words",
    other_languages="other",
    generic=(
        "The index has no matching material yet: run `code-compass index` or wait for "
        "indexing to finish (see `code-compass status`)",
        "Name a function, class or file you expect to exist, e.g. in backticks",
        "Check that the workspace folder is the project you mean",
    ),
)

PT = Messages(
    language="pt",
    # The seeds' own fixed answer, word for word.
    no_evidence="Sem evidência suficiente. Tente refinar a pergunta ou ajustar os filtros.",
    no_evidence_failure="busca: nenhuma evidência acima do minScore{stale}",
    stale_dropped=" ({n} resultado(s) descartado(s) por estarem desatualizados)",
    unknown_symbol=(
        "Não é possível responder a partir do código indexado: {names} não existe em lugar "
        "nenhum do índice (nenhum símbolo ou texto corresponde)."
    ),
    not_in_index="fora do índice: {names}",
    low_coverage="busca: cobertura baixa (evidência fraca ou única)",
    reread="releitura: {parts}",
    reread_dropped="{n} evidência(s) descartada(s) ({items})",
    reread_moved="{n} evidência(s) relocalizada(s) em arquivos editados ({items})",
    extractive_caveat=(
        "resposta: nenhum LLM configurado (defina ANTHROPIC_API_KEY); resposta extrativa"
    ),
    llm_retry="llm: respondeu após 1 nova tentativa",
    llm_retries="llm: respondeu após {n} novas tentativas",
    llm_failed=(
        "Sem resposta: {error}. As evidências encontradas estão listadas abaixo; "
        "tente de novo mais tarde ou verifique as configurações da API."
    ),
    verification="verificação: {flags}",
    answer_with_care="confiança {score}/100 (70-89): use a resposta com cuidado",
    ambiguity_resolved=(
        "`{name}` está definido em {n} arquivos ({where}); a melhor correspondência, {best}, "
        "foi a escolhida"
    ),
    ambiguity_unresolved=(
        "`{name}` está definido em {n} arquivos com pontuações quase iguais ({where}); "
        "diga qual arquivo ou use pathPrefix"
    ),
    flag_removed="citações a evidências nunca enviadas removidas: {ids}",
    flag_uncited="{n} afirmação(ões) sem citação",
    flag_identifiers="identificadores ausentes das evidências citadas: {names}",
    flag_paths="caminhos fora das evidências: {paths}",
    flag_language="idioma da resposta '{answer}' diferente do da pergunta '{question}'",
    extractive_label="Resposta extrativa (nenhum LLM configurado)",
    extractive_intro="Encontrado no índice:",
    extractive_item="- {kind}{name}em {where}{gist} {id}",
    extractive_footer=(
        "Defina ANTHROPIC_API_KEY para uma resposta redigida a partir destes trechos."
    ),
    kinds={
        "function": "função",
        "method": "método",
        "class": "classe",
        "interface": "interface",
        "struct": "struct",
        "enum": "enum",
        "type": "tipo",
        "module": "módulo",
        "section": "seção",
        "page": "página",
        "paragraph": "parágrafo",
        "window": "trecho",
        "selection": "seleção",
    },
    reasons={
        "file no longer exists": "o arquivo não existe mais",
        "text no longer in the document": "o texto não está mais no documento",
        "snippet no longer in the file": "o trecho não está mais no arquivo",
    },
    spelling="Confira a grafia: `{word}` → `{fixed}`{where}",
    did_you_mean="Você quis dizer `{term}`{where}?",
    closest_match=(
        "A correspondência mais próxima é `{name}` em {path}:{start}-{end} (pontuação {score}, "
        "abaixo do minScore {min_score}); baixe o minScore para {floor} para incluí-la"
    ),
    drop_language=(
        "Tire o filtro de linguagem '{language}': há correspondências em arquivos {languages}"
    ),
    remove_prefix=(
        "Remova o pathPrefix '{prefix}': as correspondências mais próximas estão em {path}"
    ),
    narrow="Restrinja com pathPrefix '{prefix}' (onde estão as correspondências mais próximas)",
    ask_by_name="Pergunte sobre `{term}` pelo nome: está definido no índice",
    ask_about_symbol="Pergunte sobre `{symbol}` ({path}:{line}), o símbolo indexado mais próximo",
    open_passage="Abra {path}:{start}-{end}, o trecho indexado mais próximo",
    ask_about_path="Pergunte sobre `{term}`: está no índice e perto das suas palavras",
    other_languages="de outras linguagens",
    generic=(
        "O índice ainda não tem material correspondente: rode `code-compass index` ou espere "
        "a indexação terminar (veja `code-compass status`)",
        "Cite uma função, classe ou arquivo que você espera que exista, por exemplo entre crases",
        "Confira se a pasta do workspace é o projeto que você quer",
    ),
    states={"OK": "OK", "PARTIAL": "PARCIAL", "FAIL": "FALHA"},
    coverages={"high": "alta", "medium": "média", "low": "baixa", "none": "nenhuma"},
    label_confidence="confiança",
    label_coverage="cobertura",
    label_depth="profundidade",
    label_score="pontuação",
    label_caveat="ressalva",
    label_suggestion="tente",
)

CATALOGUES = {m.language: m for m in (EN, PT)}


def messages_for(language: str | None) -> Messages:
    """The catalogue of the question's language; English for any other or an unknown one."""
    return CATALOGUES.get(language or "", EN)


def state_name(msg: Messages, state: str) -> str:
    return msg.states.get(state, state)


def coverage_name(msg: Messages, coverage: str) -> str:
    return msg.coverages.get(coverage, coverage)


def kind_name(msg: Messages, kind: str) -> str:
    return msg.kinds.get(kind, kind)


def reason_text(msg: Messages, reason: str) -> str:
    return msg.reasons.get(reason, reason)
