"""Depth signals, English and Portuguese (docs/rules.md: depth-signals).

Patterns run on `terms.normalize` output: lower case, no accents ("não" == "nao"), straight
quotes. Each lexicon is a list of (regex, strength); a signal's strength is the strongest
pattern that matched. Strengths below 0.5 are hedges: they only win a tie (see classifier).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from code_compass_server.depth.depth_records import Depth, Signal

Lexicon = Sequence[tuple[re.Pattern[str], float]]


def _lex(*items: tuple[str, float]) -> tuple[tuple[re.Pattern[str], float], ...]:
    return tuple((re.compile(p), s) for p, s in items)


# Where a clause starts: text start, after punctuation, or after a leading connective.
_CLAUSE = r"(?:^|[,;:.!?()\-]\s*|\b(?:and|but|so|then|ok|okay|hmm|e|mas|entao|ta)\s+)"

# --- D3: disagreement and correction -----------------------------------------------------
DISAGREEMENT = _lex(
    # EN
    (r"^(?:no|nope|nah)\b\s*(?:[,.!;:\-]|$)", 1.0),
    (r"^(?:wrong|incorrect|not true|not quite|false)\b", 1.0),
    (
        r"\b(?:that'?s|that is|this is|it'?s|it is|you'?re|you are|was|is|are)\s+"
        r"(?:(?:not|no longer)\s+(?:right|correct|true|accurate|quite right|what)|"
        r"wrong|incorrect|mistaken|outdated|inaccurate|false|out of date)\b",
        1.0,
    ),
    (r"\bi (?:don'?t|do not) (?:think|agree|believe)\b", 0.9),
    (r"\bi disagree\b|\bnot convinced\b", 1.0),
    (r"\b(?:i'?m|i am) not (?:sure|convinced) (?:that|this|it|about)\b", 0.9),
    (r"\bare you sure\b|\bis that (?:right|correct|true)\b", 0.9),
    (r"^(?:actually|in fact)\b", 0.9),
    (r"\b(?:doesn'?t|does not|don'?t|do not|didn'?t) (?:match|exist)\b", 0.9),
    (r"\bi (?:thought|was told|believed)\b", 0.8),
    (r"\b(?:i believe|i'?m (?:fairly|pretty|quite) sure|i am (?:fairly|pretty|quite) sure)\b", 0.8),
    (r"\bcan'?t be (?:right|true|correct)\b|\byou (?:confused|mixed up|misread|missed)\b", 0.9),
    (r"^(?:but|wait|hmm|hm)\b.*\b(?:i see|i saw|i found|i can see|not|doesn'?t|isn'?t|no)\b", 0.8),
    (r"^(?:isn'?t|wasn'?t|aren'?t|doesn'?t|shouldn'?t) (?:it|that|this|the|they)\b", 0.8),
    (r"\b(?:isn'?t|wasn'?t) (?:it|that)\s*\?", 0.8),
    (
        r"\byour (?:previous |last |earlier |first )?answer\b.*\b(?:wrong|incorrect|outdated|not)\b",  # noqa: E501
        1.0,
    ),
    (r"\b(?:was|were|got|has been|have been) (?:replaced|removed|renamed|deleted|dropped)\b", 0.6),
    (r"\b(?:anymore|no longer)\b", 0.6),
    (r"\bold value\b|\bwe (?:switched|moved|migrated) to\b", 0.6),
    # PT
    (r"^(?:nao|nada disso|negativo)\s*(?:[,.!;:\-]|$)", 1.0),
    (r"^nao (?:e|era|foi|esta|eh)\b", 0.9),
    (r"\b(?:isso|isto|esse|essa|ele|ela) nao (?:e|era|esta|foi|eh)\b", 0.9),
    (r"^(?:errado|incorreto|errada|incorreta)\b", 1.0),
    (
        r"\b(?:esta|ta|e|foi|estava|era|eh)\s+(?:totalmente |completamente |meio )?"
        r"(?:errad|incorret|equivocad|desatualizad)\w*",
        1.0,
    ),
    (r"\b(?:nao|n) concordo\b|\bdiscordo\b", 1.0),
    (r"\bna (?:verdade|realidade)\b", 0.9),
    (r"\bacho que nao\b|\bnao e bem assim\b|\bnao acho\b", 1.0),
    (r"\btem certeza\b|\bnao tenho certeza\b|\bcerteza disso\b", 0.9),
    (r"\b(?:eu )?(?:achava|pensei|pensava|achei|imaginava) que\b", 0.8),
    (r"\bnao (?:bate|confere|existe|procede)\b", 0.9),
    (r"\b(?:voce )?se enganou\b|\bvoce (?:esta|ta) errad", 1.0),
    (r"\bsua resposta\b.*\b(?:errad|incorret|desatualizad|nao)\w*", 1.0),
    (r"^mas\b.*\b(?:eu vi|vi|encontrei|achei|vejo|nao)\b", 0.8),
    (r"\bnao era\b", 0.7),
    (
        r"\b(?:tenho|estou) (?:quase |bem )?(?:certeza|convencido)\b|\bconfundiu\b|\bnao pode ser\b",  # noqa: E501
        0.9,
    ),
    (r"\b(?:isso|isto|ele|ela) mudou\b|\bnao (?:usa|existe|e) mais\b", 0.8),
    (r"\b(?:foi|foram) (?:substituid|removid|renomead|apagad)\w*", 0.6),
)

# A statement (no question mark) that contrasts "X, not Y": a correction more often than not.
CONTRAST_STATEMENT = re.compile(r",\s*(?:not|nao)\b")
# A negated statement right after an answer ("SECRET_KEY isn't required") is probably a
# correction; only a hedge, so a clearer signal of another level wins.
NEGATED_STATEMENT = re.compile(r"\b(?:not|never|no|nao|nunca|nem)\b|n't\b")
REQUEST_START = re.compile(
    r"^(?:please |por favor )?(?:show|list|explain|give|tell|find|describe|compare|summari[sz]e|"
    r"mostra|mostre|liste|explica|explique|me da|me de|me passa|descreva|compare|resuma)\b"
)

# --- D4: explicit topic-shift markers ----------------------------------------------------
TOPIC_SHIFT_MARKERS = _lex(
    (
        r"\b(?:different|another|unrelated|separate|new|other|totally different|"
        r"completely different) (?:topic|subject|question|thing|matter)\b",
        0.95,
    ),
    (r"\bunrelated\b|\bswitching (?:gears|topics?|subjects?)\b", 0.95),
    (r"^separately\b|\b(?:aside from|apart from) (?:that|this)\b|\bon a separate note\b", 0.9),
    (r"\ba parte (?:disso|isso|disto)\b|^(?:a proposito|aproveitando)\b", 0.9),
    (r"\bchang(?:e|ing) (?:the )?(?:topic|subject)\b|\bchange of (?:topic|subject)\b", 0.95),
    (r"\bsomething else\b|\bmoving on\b|\bon (?:another|a different|an unrelated) note\b", 0.95),
    (r"^(?:ok(?:ay)?,? )?(?:so,? )?anyway\b|^forget (?:that|it|about)\b|^never ?mind\b", 0.9),
    (r"\bmudando de (?:assunto|tema|foco)\b|\btrocando de (?:assunto|tema)\b", 0.95),
    (r"\b(?:outro|novo) (?:assunto|tema)\b|\boutra (?:coisa|pergunta|questao)\b", 0.95),
    (r"\b(?:pergunta|questao) nova\b|\bnova (?:pergunta|questao)\b", 0.95),
    (r"\bsem relacao\b|\bnada a ver\b|\bdeixando (?:isso|isto) de lado\b", 0.95),
    (r"\bassunto (?:totalmente |completamente )?diferente\b", 0.95),
    (r"^(?:enfim|esquece|esquece isso|deixa pra la)\b", 0.9),
)

# --- D1: going back to an earlier topic of this conversation --------------------------------
TOPIC_RETURN_MARKERS = _lex(
    (r"\b(?:going|coming|getting|go|come) back to\b|^back to\b|\breturning to\b", 0.8),
    (r"\bvoltando (?:a|ao|aos|as|para|pra)\b|\bde volta (?:a|ao|as|aos)\b|\bretomando\b", 0.8),
)

# --- D2: explanation ------------------------------------------------------------------------
EXPLANATION = _lex(
    (_CLAUSE + r"why\b", 0.8),
    (r"\bdescribe\b|\bdescrev(?:a|er|e|am)\b|\bhow (?:\w+ )+flows?\b", 0.8),
    (r"\bhow come\b|\bexplain\b|\bexplanation\b|\belaborate\b|\bwalk me through\b", 0.8),
    (r"\bhelp me understand\b|\bin (?:more )?detail\b", 0.8),
    (
        r"\bwhat(?:'?s| is| was) the (?:reason|rationale|point|purpose|idea)\b|\breason (?:for|behind)\b",  # noqa: E501
        0.8,
    ),
    (r"\bhow (?:does|do|did)\b.*\bwork", 0.8),
    (
        r"\bhow (?:is|are|was|were)\b(?: \w+){1,5} (?:computed|calculated|implemented|decided|"
        r"determined|chosen|designed|structured|evaluated|ranked|scored|fused|combined)\b",
        0.8,
    ),
    (r"\bwhat happens (?:when|if|after|before)\b", 0.7),
    (_CLAUSE + r"(?:por que|porque|pq|por qual (?:motivo|razao))\b", 0.8),
    (r"\bexplic\w*|\bexpliqu\w*|\bnao entendi\b|\bentender melhor\b|\bdetalhar?\b", 0.8),
    (
        r"\bcomo (?:funciona|funcionam|e feit|sao feit|e calculad|sao calculad|e implementad|"
        r"e decidid|e escolhid|e montad|e avaliad|sao avaliad|e combinad)\w*",
        0.8,
    ),
    (r"\bqual (?:e )?(?:o|a) (?:motivo|razao|objetivo|proposito|ideia)\b", 0.8),
    (r"\bo que acontece (?:quando|se|depois|antes)\b", 0.7),
)
# "por quê" with its accent is always "why" (normalisation would make it look like "porque").
WHY_ACCENTED = re.compile(r"\bpor\s?qu[êÊ]\b|\bporqu[êÊ]\b", re.IGNORECASE)

# --- D2: comparison -------------------------------------------------------------------------
COMPARISON = _lex(
    (r"\bdifferences? (?:between|from|with)\b|\bdiffers?\b|\bcompare\b|\bcomparison\b", 0.8),
    (r"\bversus\b|\bvs\.?\s+(?!code\b)\w", 0.8),
    (r"\b(?:which|what)(?: one)? is (?:better|faster|preferable|simpler|safer)\b", 0.8),
    (r"\bpros and cons\b|\btrade-?offs?\b", 0.8),
    (r"\bdiferencas? (?:entre|de|do|da)\b|\bdifere\b|\bcompar(?:a|ar|e|ando|acao)\b", 0.8),
    (r"\bqual (?:e )?(?:o |a )?(?:melhor|mais rapid\w*|mais simples|preferivel)\b", 0.8),
    (r"\bvantage(?:m|ns)\b|\bpros e contras\b", 0.8),
)

# --- D2: list / summary ---------------------------------------------------------------------
LIST_SUMMARY = _lex(
    (r"^(?:please |can you |could you )?(?:list|enumerate|summari[sz]e)\b", 0.8),
    (r"\b(?:list|show|give me|name|find) (?:all|every|each)\b", 0.8),
    (
        r"\bsummar(?:y|ise|ize)\b|\boverview\b|\brundown\b|\bhigh[- ]level view\b|\bwhat are all\b",
        0.8,
    ),
    (r"\b(?:a |uma )?lista? (?:of|de|com) (?:all|every|todos|todas|cada)\b", 0.8),
    (r"\bevery (?:place|file|call|usage|caller|command|endpoint|route)\b", 0.8),
    (
        r"\ball (?:the )?(?:places|callers|usages|commands|endpoints|routes|options|references)\b",
        0.8,
    ),
    (r"^(?:por favor,? )?(?:liste|listar|lista|enumere|resuma|resume)\b", 0.8),
    (r"\b(?:liste|listar|lista|mostre|mostra|me de|me da) (?:todos|todas|cada)\b", 0.8),
    (r"\bquais sao (?:todos|todas)\b|\btodos os (?:lugares|comandos|endpoints|usos|pontos)\b", 0.8),
    (r"\bresum(?:o|a|ir|e)\b|\bvisao geral\b|\bpanorama\b", 0.8),
)

# --- D1: temporal reference -----------------------------------------------------------------
TEMPORAL = _lex(
    (
        r"\b(?:last|past|previous) (?:week|month|sprint|release|commit|time|night|year|version)\b",
        0.7,
    ),
    (r"\byesterday\b|\bearlier\b|\bpreviously\b|\brecently\b|\bthis morning\b|\bago\b", 0.7),
    (r"\b(?:recent|latest) (?:change|changes|commit|commits)\b", 0.7),
    (
        r"\b(?:you|we) (?:said|mentioned|discussed|talked about)\b|\bas (?:you )?(?:said|mentioned)\b",  # noqa: E501
        0.7,
    ),
    (r"\b(?:semana|mes|sprint|versao|release) passad[ao]\b|\bontem\b|\bmais cedo\b", 0.7),
    (r"\banteriormente\b|\brecentemente\b|\bda ultima vez\b|\bha \d+ dias\b", 0.7),
    (r"\bultim[oa]s? (?:commit|versao|release|semana|mudanca|alteracao)s?\b", 0.7),
    (r"\bvoce (?:falou|disse|mencionou)\b|\b(?:falamos|conversamos|discutimos)\b", 0.7),
    (r"\bantes\s*[;,.?!]|\bantes$", 0.6),
)

# --- D1: follow-up markers (the question leans on the previous one) -------------------------
FOLLOW_UP = _lex(
    (r"^(?:ok(?:ay)?,? |so,? |and,? )?(?:and|also|then|plus)\b", 0.75),
    (r"^(?:what|how) about\b|\bsame (?:question|thing|for)\b|^(?:what|anything) else\b", 0.75),
    (r"^(?:ok(?:ay)?,? )?(?:e|tambem|entao|mais)\b", 0.75),
    (r"^e (?:quanto|sobre|se|no|na|nos|nas|o|a|os|as|em|para|pra)\b", 0.75),
    (r"\bmesm[ao] (?:pergunta|coisa|para|pra)\b|^(?:mais alguma|algo mais)\b", 0.75),
)

# --- D1: anaphora (only meaningful when there is a history) ---------------------------------
_DEMONSTRATIVE_NOUNS = (
    "lock|method|function|file|class|limit|value|module|call|line|one|part|code|case|test|tests|"
    "variable|constant|setting|config|schema|field|query|thing|change|step|loop|check|flag|path|"
    "key|function's|error|exception|endpoint|route|command|option|parameter|argument|timeout"
)
ANAPHORA = _lex(
    (r"\b(?:it|its|they|them|their)\b", 0.7),
    (rf"\b(?:that|this|those|these) (?:{_DEMONSTRATIVE_NOUNS})s?\b", 0.7),
    (r"\b(?:that|this)\s*(?:[?.!,;]|$)", 0.7),
    (
        r"\b(?:before|after|for|about|with|from|like|than|do|does|compare|explain|change) (?:that|this)\b",  # noqa: E501
        0.7,
    ),
    (r"\bthere\s*[?.!]?$|\bthe same\b|\bthe above\b|\bthe former\b|\bthe latter\b", 0.7),
    (r"\b(?:ele|ela|eles|elas|dele|dela|deles|delas|nele|nela|neles|nelas)\b", 0.7),
    (r"\b(?:isso|isto|disso|disto|nisso|nisto|aquilo|daquilo)\b", 0.7),
    (r"\b(?:esse|essa|esses|essas|desse|dessa|desses|dessas|nesse|nessa|aquele|aquela)\b", 0.7),
    (r"\b(?:la|ali)\s*[?.!]?$|\bo mesmo\b|\ba mesma\b", 0.7),
)
QUESTION_START = re.compile(
    r"^(?:where|what|which|who|whom|whose|how|when|why|is|are|does|do|did|can|could|should|"
    r"would|will|has|have|was|were|onde|qual|quais|quem|como|quando|por que|porque|pq|o que|"
    r"que|existe|tem|ha|da|pode|posso|e possivel|list|liste|explain|explica|show|mostra)\b"
)
# Without a history, "this function" points at the editor selection: still a direct question.
# ("esta"/"este" are left out: without accents they are the verb "está".)
DEICTIC = re.compile(r"\b(?:this|these|essa|esse|essas|esses) (?:\w+)\b")


@dataclass(frozen=True, slots=True)
class LexiconHit:
    strength: float
    matched: str


def match(lexicon: Lexicon, text: str) -> LexiconHit | None:
    """The strongest pattern of `lexicon` found in `text`, or None."""
    best: LexiconHit | None = None
    for pattern, strength in lexicon:
        if best is not None and strength <= best.strength:
            continue
        m = pattern.search(text)
        if m:
            best = LexiconHit(strength, m.group(0).strip())
    return best


def lexical_signals(norm: str, raw: str, *, has_history: bool, has_answer: bool) -> list[Signal]:
    """Signals read from the question's wording alone (history only gates some of them)."""
    out: list[Signal] = []

    def add(name: str, level: Depth, hit: LexiconHit | None) -> None:
        if hit is not None:
            out.append(Signal(name, level, hit.strength, hit.matched))

    if has_answer and (dis := _disagreement(norm)) is not None:
        # "No tests for it?" is a question, not a "No." - the regexes need the punctuation.
        # A doubt asked as a question is a disagreement; a statement is a correction.
        name = "disagreement" if "?" in norm else "correction"
        out.append(Signal(name, "D3", dis.strength, dis.matched))
    if has_history:
        add("topic_shift", "D4", match(TOPIC_SHIFT_MARKERS, norm))
        add("topic_return", "D1", match(TOPIC_RETURN_MARKERS, norm))
        add("follow_up", "D1", match(FOLLOW_UP, norm))
        add("anaphora", "D1", match(ANAPHORA, norm))
        if len(norm.split()) <= 5 and not QUESTION_START.search(norm):
            # "Per user or per IP?": no question word of its own, it completes the last one.
            out.append(Signal("ellipsis", "D1", 0.7, "short, no question word"))
    elif DEICTIC.search(norm):
        out.append(Signal("deictic_reference", "D0", 0.5, "selection"))
    why = match(EXPLANATION, norm)
    if why is None and WHY_ACCENTED.search(raw):
        why = LexiconHit(0.8, "por quê")
    add("explanation_request", "D2", why)
    add("comparison_request", "D2", match(COMPARISON, norm))
    add("list_summary_request", "D2", match(LIST_SUMMARY, norm))
    add("temporal_reference", "D1", match(TEMPORAL, norm))
    return out


def _disagreement(norm: str) -> LexiconHit | None:
    """A disagreement marker, or a statement that contrasts or negates (X, not Y)."""
    dis = match(DISAGREEMENT, norm)
    statement = not norm.endswith("?") and not REQUEST_START.search(norm)
    if dis is None and statement and CONTRAST_STATEMENT.search(norm):
        dis = LexiconHit(0.7, "X, not Y")
    if dis is None and statement and NEGATED_STATEMENT.search(norm):
        dis = LexiconHit(0.6, "negated statement")
    return dis
