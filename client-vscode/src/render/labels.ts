/**
 * The words an answer is framed with, in the question's language (pure). The server detects
 * the language (`meta.questionLanguage`) and writes the answer, refusal, caveats and
 * suggestions in it; these are the labels the client adds around them: state and coverage
 * names, badges, section titles, the count of flagged sentences. Portuguese and English; any
 * other language reads English, as on the server. The view's own controls (Edit, Retry, the
 * input's placeholder) follow the editor, not the question.
 */

export interface AnswerLabels {
  states: Readonly<Record<string, string>>;
  coverages: Readonly<Record<string, string>>;
  coverage: string;
  depth: string;
  extractive: string;
  extractiveTitle: string;
  extractiveStatus: string;
  evidence: string;
  suggestions: string;
  actionsTitle: string; // the chat's list of what the answer offers to do
  score: string;
  checkedAgain: string; // the chat's note before a text the citation check changed
  markedInText: string;
  flags: Readonly<Record<string, string>>;
  unsupported: (n: number) => string;
  uncited: (n: number) => string;
}

export const EN_LABELS: AnswerLabels = {
  states: {},
  coverages: {},
  coverage: "coverage",
  depth: "depth",
  extractive: "extractive",
  extractiveTitle: "no language model was called: the text is taken from the evidence",
  extractiveStatus: "extractive (no model was called)",
  evidence: "Evidence",
  suggestions: "Suggestions",
  actionsTitle: "Try",
  score: "score",
  checkedAgain: "After checking the citations against the evidence:",
  markedInText: "marked in the text",
  flags: { unsupported: "unsupported", uncited: "uncited" },
  unsupported: (n) => `${n} sentence${n > 1 ? "s" : ""} not supported by ${n > 1 ? "their" : "its"} citations`,
  uncited: (n) => `${n} without a citation`,
};

const PT: AnswerLabels = {
  states: { OK: "OK", PARTIAL: "PARCIAL", AMBIGUOUS: "AMBÍGUA", FAIL: "FALHA" },
  coverages: { high: "alta", medium: "média", low: "baixa", none: "nenhuma" },
  coverage: "cobertura",
  depth: "profundidade",
  extractive: "extrativa",
  extractiveTitle: "nenhum modelo de linguagem foi chamado: o texto vem das evidências",
  extractiveStatus: "extrativa (nenhum modelo foi chamado)",
  evidence: "Evidências",
  suggestions: "Sugestões",
  actionsTitle: "Tente",
  score: "pontuação",
  checkedAgain: "Depois de conferir as citações com as evidências:",
  markedInText: "marcadas no texto",
  flags: { unsupported: "sem suporte", uncited: "sem citação" },
  unsupported: (n) => `${n} frase${n > 1 ? "s" : ""} sem suporte nas citações`,
  uncited: (n) => `${n} sem citação`,
};

const CATALOGUES: Readonly<Record<string, AnswerLabels>> = { en: EN_LABELS, pt: PT };

/** The labels of the answer's question language (English for any other or none). */
export function labelsFor(answer?: { meta?: { questionLanguage?: string | null } | null }): AnswerLabels {
  return CATALOGUES[answer?.meta?.questionLanguage ?? ""] ?? EN_LABELS;
}

export function stateName(labels: AnswerLabels, state: string): string {
  return labels.states[state] ?? state;
}

export function coverageName(labels: AnswerLabels, coverage: string): string {
  return labels.coverages[coverage] ?? coverage;
}
