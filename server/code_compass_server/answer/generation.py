"""Call stage of `ask`: the answer text, from the model, from the evidence alone, or refused.

Without an API key the answer is extractive (what was found where, cited) and never calls
the API; a refusal (see grounds.py) is fixed text. The model is called only with evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from code_compass_server.answer.absent import absence_sentence
from code_compass_server.answer.extractive import extractive_answer
from code_compass_server.answer.grounds import Refusal
from code_compass_server.answer.llm import LlmConfig, LlmError, LlmResult, complete
from code_compass_server.answer.messages import EN, Messages, messages_for
from code_compass_server.answer.prompt import PromptInput, redacted_prompt

REFUSED, EXTRACTIVE, MODEL = "refused", "extractive", "model"


@dataclass(frozen=True, slots=True)
class Generation:
    text: str
    source: str  # REFUSED | EXTRACTIVE | MODEL
    model: str | None = None  # the model that answered (or was asked, if the call failed)
    result: LlmResult | None = None
    error: LlmError | None = None
    redactions: int = 0  # secrets masked in what was sent

    @property
    def llm_called(self) -> bool:
        return self.source == MODEL

    @property
    def extractive(self) -> bool:
        return self.source == EXTRACTIVE

    @property
    def verifiable(self) -> bool:
        """Whether there is an answer whose claims and citations can be checked."""
        return self.extractive or self.result is not None

    def applied(self) -> list[str]:
        """The rules this step applied, for confidence.rules."""
        return [f"secrets redacted before sending ({self.redactions})"] if self.llm_called else []

    def caveat(self, msg: Messages = EN) -> str | None:
        if self.extractive:
            return msg.extractive_caveat
        retries = self.result.retries if self.result else 0
        if retries:
            return msg.llm_retry if retries == 1 else msg.llm_retries.format(n=retries)
        return None


def generate(
    refused: Refusal | None,
    given: PromptInput,
    llm: LlmConfig,
    on_text: Callable[[str], None] | None = None,
    offline: bool = False,
) -> Generation:
    """`offline`: answer from the evidence alone even with a key (evidence below minScore)."""
    if refused is not None:
        if given.absent:  # a name that exists nowhere: what it is not, and what is there
            said = " ".join(absence_sentence(a, given.question_language) for a in given.absent)
            return Generation(f"{refused.text}\n\n{said}", REFUSED)
        return Generation(refused.text, REFUSED)
    msg = messages_for(given.question_language)
    if offline or not llm.configured:
        text = extractive_answer(given.evidences, msg, given.question)
        if given.absent:  # said first, after the label line (extractive.extractive_frame)
            label, _, rest = text.partition("\n")
            said = " ".join(absence_sentence(a, given.question_language) for a in given.absent)
            text = f"{label}\n{said}\n{rest}"
        return Generation(text, EXTRACTIVE)
    prompt, redactions = redacted_prompt(given)
    try:
        result = complete(llm, prompt.system, prompt.messages, on_text=on_text)
    except LlmError as err:
        text = msg.llm_failed.format(error=err.message)
        return Generation(text, MODEL, llm.model, error=err, redactions=redactions)
    return Generation(result.text, MODEL, result.model, result=result, redactions=redactions)
