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
    # Marks on the answer's ungrounded sentences, and their legend (marked_text.py)
    marker_unsupported: str = ""
    marker_uncited: str = ""
    marker_removed: str = ""  # {ids}
    legend_unsupported: str = ""
    legend_uncited: str = ""
    legend_removed: str = ""
    # Suggestions (suggestions.py)
    spelling: str = ""  # {word} {fixed} {where}: where is " (path)" or ""
    closest_match: str = ""  # {name} {path} {start} {end} {score} {min_score}
    drop_language: str = ""  # {language} {languages}
    remove_prefix: str = ""  # {prefix} {path}
    narrow: str = ""  # {prefix}
    open_passage: str = ""  # {path} {start} {end}
    other_languages: str = ""  # the language filter dropped and no other language known
    about_symbol_question: str = ""  # {symbol}: a question a suggestion asks for the user
    only_language: str = ""  # {language}
    searched: str = ""  # {scope} {query} {outcome}
    searched_all: str = ""  # {n}: every project
    searched_one: str = ""  # {name}
    searched_under: str = ""  # {prefix}
    searched_in: str = ""  # {language}
    searched_nothing: str = ""
    searched_below: str = ""  # {min_score} {score} {where}
    generic: tuple[str, ...] = ()
    generic_unfinished: str = ""  # first of the generic advice while indexing is not done
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
    marker_unsupported="[!unsupported]",
    marker_uncited="[!uncited]",
    marker_removed="[!citation removed: {ids}]",
    legend_unsupported="[!unsupported] the passages this sentence cites do not back it",
    legend_uncited="[!uncited] this sentence cites no evidence",
    legend_removed="[!citation removed] it cited evidence that was never sent (invented)",
    spelling="Check the spelling: `{word}` → `{fixed}`{where}",
    closest_match="Open `{name}` in {path}:{start}-{end}, the closest match (score {score})",
    drop_language="Ask again in every language: matches exist in {languages} files",
    remove_prefix="Ask again in every folder: the closest matches are in {path}",
    narrow="Ask again only in {prefix} (where the closest matches are)",
    open_passage="Open {path}:{start}-{end}, the nearest indexed passage",
    other_languages="other",
    about_symbol_question="What does `{symbol}` do?",
    only_language="Ask again only in {language} files (where the closest matches are)",
    searched="Searched {scope} for “{query}”: {outcome}.",
    searched_all="all {n} projects",
    searched_one="the project {name}",
    searched_under=" under {prefix}",
    searched_in=" in {language} files",
    searched_nothing="nothing in the index matches these words",
    searched_below=("nothing reached minScore {min_score}; the closest, {where}, scored {score}"),
    generic=(
        "Nothing indexed in this workspace shares these words: it may not contain this",
        "Name a function, class or file you expect to exist, e.g. in backticks",
        "Check that the workspace folder is the project you mean",
    ),
    generic_unfinished=(
        "Indexing is not finished: ask again once the workspace's status says it is ready"
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
    marker_unsupported="[!sem suporte]",
    marker_uncited="[!sem citação]",
    marker_removed="[!citação removida: {ids}]",
    legend_unsupported="[!sem suporte] os trechos que esta frase cita não a sustentam",
    legend_uncited="[!sem citação] esta frase não cita nenhuma evidência",
    legend_removed="[!citação removida] ela citava uma evidência que nunca foi enviada (inventada)",
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
    closest_match=(
        "Abra `{name}` em {path}:{start}-{end}, a correspondência mais próxima (pontuação {score})"
    ),
    drop_language="Pergunte de novo em todas as linguagens: há correspondências em {languages}",
    remove_prefix=(
        "Pergunte de novo em todas as pastas: as correspondências mais próximas estão em {path}"
    ),
    narrow="Pergunte de novo só em {prefix} (onde estão as correspondências mais próximas)",
    open_passage="Abra {path}:{start}-{end}, o trecho indexado mais próximo",
    other_languages="de outras linguagens",
    about_symbol_question="O que faz `{symbol}`?",
    only_language="Pergunte de novo só em arquivos {language} (onde estão as mais próximas)",
    searched="Busquei {scope} por “{query}”: {outcome}.",
    searched_all="em todos os {n} projetos",
    searched_one="no projeto {name}",
    searched_under=" sob {prefix}",
    searched_in=" em arquivos {language}",
    searched_nothing="nada no índice corresponde a essas palavras",
    searched_below=(
        "nada alcançou o minScore {min_score}; o mais próximo, {where}, pontuou {score}"
    ),
    generic=(
        "Nada indexado neste workspace tem essas palavras: talvez ele não contenha isso",
        "Cite uma função, classe ou arquivo que você espera que exista, por exemplo entre crases",
        "Confira se a pasta do workspace é o projeto que você quer",
    ),
    generic_unfinished=(
        "A indexação não terminou: pergunte de novo quando o status do workspace disser que "
        "está pronto"
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
