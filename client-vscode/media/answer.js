// Answer view script. The HTML it receives was built by src/render/answer.ts, which
// escapes every piece of server text; this script only routes clicks and input.
// @ts-check
(function () {
  const vscode = acquireVsCodeApi();
  const conversation = /** @type {HTMLElement} */ (document.getElementById("conversation"));
  const form = /** @type {HTMLFormElement} */ (document.getElementById("ask-form"));
  const input = /** @type {HTMLTextAreaElement} */ (document.getElementById("ask-input"));
  const askButton = /** @type {HTMLButtonElement} */ (document.getElementById("ask-button"));
  const stopButton = /** @type {HTMLButtonElement} */ (document.getElementById("stop-button"));
  const editing = /** @type {HTMLElement} */ (document.getElementById("editing"));
  const editingLabel = /** @type {HTMLElement} */ (document.getElementById("editing-label"));
  const cancelEdit = /** @type {HTMLButtonElement} */ (document.getElementById("cancel-edit"));
  const toolbar = /** @type {HTMLElement} */ (document.getElementById("toolbar"));
  const history = /** @type {HTMLSelectElement} */ (document.getElementById("history"));
  /** @type {number | undefined} the turn being edited */
  let editTurn;
  let busy = false;

  function setEditing(/** @type {number | undefined} */ turn) {
    editTurn = turn;
    editing.hidden = turn === undefined;
    editingLabel.textContent = turn === undefined ? "" : `Editing question ${turn + 1}: the answers after it will be replaced.`;
  }

  function autosize() {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 160)}px`;
  }

  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "render" && typeof msg.html === "string") {
      const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
      conversation.innerHTML = msg.html;
      if (nearBottom || msg.scroll) window.scrollTo(0, document.body.scrollHeight);
    } else if (msg.type === "busy") {
      busy = !!msg.busy;
      askButton.hidden = busy;
      stopButton.hidden = !busy;
      document.body.classList.toggle("busy", busy);
    } else if (msg.type === "focusInput") {
      input.focus();
    } else if (msg.type === "conversations" && Array.isArray(msg.conversations)) {
      // Earlier conversations (kept across reloads): a picker, shown once there is a choice.
      history.replaceChildren(
        ...msg.conversations.map((/** @type {{id: string, title: string, current: boolean}} */ c) => {
          const option = document.createElement("option");
          option.value = c.id;
          option.textContent = c.current ? `${c.title} (current)` : c.title;
          option.selected = c.current;
          return option;
        }),
      );
      toolbar.hidden = msg.conversations.length < 2;
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
    const copyCode = target.closest("button.copy-code");
    if (copyCode instanceof HTMLElement) {
      const code = copyCode.parentElement?.querySelector("pre code");
      if (code) vscode.postMessage({ type: "copy", text: code.textContent ?? "" });
      copyCode.textContent = "Copied";
      setTimeout(() => (copyCode.textContent = "Copy"), 1500);
      return;
    }
    const suggestion = target.closest("button.suggestion");
    if (suggestion instanceof HTMLElement) {
      if (busy) return;
      if (suggestion.dataset.ask) vscode.postMessage({ type: "ask", query: suggestion.dataset.ask });
      else vscode.postMessage({ type: "suggestion", turn: Number(suggestion.dataset.turn), index: Number(suggestion.dataset.suggestion) });
      return;
    }
    const action = target.closest("button[data-action]");
    if (action instanceof HTMLElement) {
      const turn = Number(action.dataset.turn);
      switch (action.dataset.action) {
        case "edit": {
          if (busy) return;
          const q = action.closest("section.turn")?.querySelector(".q-text");
          input.value = q?.textContent ?? "";
          setEditing(turn);
          autosize();
          input.focus();
          break;
        }
        case "retry":
          if (!busy) vscode.postMessage({ type: "retry", turn });
          break;
        case "copyAnswer":
          vscode.postMessage({ type: "copyAnswer", turn });
          action.textContent = "Copied";
          setTimeout(() => (action.textContent = "Copy answer"), 1500);
          break;
        case "setApiKey":
          vscode.postMessage({ type: "setApiKey" });
          break;
      }
    }
  });

  function submit() {
    const query = input.value.trim();
    if (!query || busy) return;
    input.value = "";
    autosize();
    if (editTurn !== undefined) vscode.postMessage({ type: "edit", turn: editTurn, query });
    else vscode.postMessage({ type: "ask", query });
    setEditing(undefined);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    } else if (event.key === "Escape" && editTurn !== undefined) {
      input.value = "";
      setEditing(undefined);
    }
  });
  input.addEventListener("input", autosize);
  cancelEdit.addEventListener("click", () => {
    input.value = "";
    setEditing(undefined);
  });
  stopButton.addEventListener("click", () => vscode.postMessage({ type: "stop" }));
  history.addEventListener("change", () => vscode.postMessage({ type: "switchConversation", id: history.value }));

  vscode.postMessage({ type: "ready" });
})();
