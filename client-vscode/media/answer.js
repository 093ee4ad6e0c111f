// Answer view script. The HTML it receives was built by src/render/answer.ts, which
// escapes every piece of server text; this script only routes clicks and input.
// @ts-check
(function () {
  const vscode = acquireVsCodeApi();
  const conversation = /** @type {HTMLElement} */ (document.getElementById("conversation"));
  const form = /** @type {HTMLFormElement} */ (document.getElementById("ask-form"));
  const input = /** @type {HTMLInputElement} */ (document.getElementById("ask-input"));
  const button = /** @type {HTMLButtonElement} */ (document.getElementById("ask-button"));

  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "render" && typeof msg.html === "string") {
      const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
      conversation.innerHTML = msg.html;
      if (nearBottom || msg.scroll) window.scrollTo(0, document.body.scrollHeight);
    } else if (msg.type === "busy") {
      button.disabled = !!msg.busy;
    } else if (msg.type === "focusInput") {
      input.focus();
    }
  });

  conversation.addEventListener("click", (event) => {
    const target = /** @type {HTMLElement} */ (event.target);
    const cite = target.closest("a.cite");
    if (cite instanceof HTMLElement) {
      event.preventDefault();
      vscode.postMessage({ type: "openCitation", turn: Number(cite.dataset.turn), id: cite.dataset.cite });
      return;
    }
    const ev = target.closest("a.evidence");
    if (ev instanceof HTMLElement) {
      event.preventDefault();
      vscode.postMessage({ type: "openEvidence", turn: Number(ev.dataset.turn), id: ev.dataset.evidence });
      return;
    }
    const suggestion = target.closest("button.suggestion");
    if (suggestion instanceof HTMLElement && suggestion.dataset.ask) {
      vscode.postMessage({ type: "ask", query: suggestion.dataset.ask });
    }
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = input.value.trim();
    if (!query || button.disabled) return;
    input.value = "";
    vscode.postMessage({ type: "ask", query });
  });

  vscode.postMessage({ type: "ready" });
})();
