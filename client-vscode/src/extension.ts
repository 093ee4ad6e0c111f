/** Entry point: wires the server, status bar, commands and views. All logic stays in the server. */
import * as vscode from "vscode";
import { ANSWER_VIEW_ID, AnswerView } from "./answerView";
import { registerChatParticipant } from "./chatParticipant";
import { registerMcpProvider } from "./mcpProvider";
import { registerLineHighlight, wireFileOf } from "./open";
import { Methods, type ReindexResult } from "./protocol";
import { SHOW_REFERENCES, showReferences } from "./references";
import { searchCode } from "./searchPick";
import { ApiKeyStore } from "./secrets";
import { TeamIndexPassword } from "./teamIndex";
import { ServerController } from "./server";
import { SECTION } from "./settings";
import { StatusBar } from "./statusBar";

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("Code Compass", { log: true });
  const keys = new ApiKeyStore(context);
  const teamPassword = new TeamIndexPassword(context);
  const server = new ServerController(context, log, keys, teamPassword);
  controller = server;
  const status = new StatusBar(server);
  const answers = new AnswerView(context, server, log);
  context.subscriptions.push(
    log,
    server,
    status,
    answers,
    registerLineHighlight(),
    // Kept alive while hidden: a running answer keeps streaming into it.
    vscode.window.registerWebviewViewProvider(ANSWER_VIEW_ID, answers, { webviewOptions: { retainContextWhenHidden: true } }),
  );

  const askQuestion = async (): Promise<void> => {
    const query = await vscode.window.showInputBox({
      title: "Code Compass: Ask a Question",
      prompt: "Answered only from this workspace's code and documents, with citations.",
      placeHolder: "e.g. How is the configuration loaded?",
      ignoreFocusOut: true,
      validateInput: (v) => (v.length > 500 ? "Keep the question under 500 characters." : undefined),
    });
    if (query?.trim()) await answers.ask(query.trim());
  };

  const askSelection = async (): Promise<void> => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.selection.isEmpty) {
      void vscode.window.showInformationMessage("Select some code first, then run “Code Compass: Ask About Selection”.");
      return;
    }
    const sel = editor.selection;
    const text = editor.document.getText(sel);
    const query = await vscode.window.showInputBox({
      title: "Code Compass: Ask About Selection",
      value: "What does this code do?",
      prompt: `About ${vscode.workspace.asRelativePath(editor.document.uri)}:${sel.start.line + 1}-${sel.end.line + 1}`,
      ignoreFocusOut: true,
    });
    if (!query?.trim()) return;
    const file = wireFileOf(editor.document);
    await answers.ask(query.trim(), {
      activeFile: file?.path,
      // Wire lines are 1-based inclusive.
      selection: { startLine: sel.start.line + 1, endLine: sel.end.line + 1, text },
    });
  };

  const register = (id: string, fn: (...args: never[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  };
  register("codeCompass.ask", askQuestion);
  register("codeCompass.askSelection", askSelection);
  register("codeCompass.search", () => searchCode(server));
  register("codeCompass.reindex", async () => {
    try {
      const r = await server.request<ReindexResult>(Methods.reindex, {});
      if (r?.started) void vscode.window.setStatusBarMessage("$(sync~spin) Code Compass: reindexing…", 3000);
    } catch (err) {
      void vscode.window.showErrorMessage(`Code Compass: reindex failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  register("codeCompass.setApiKey", () => keys.promptAndStore());
  register("codeCompass.clearApiKey", () => keys.clear());
  register("codeCompass.setTeamIndexPassword", () => teamPassword.promptAndStore());
  register("codeCompass.clearTeamIndexPassword", () => teamPassword.clear());
  register("codeCompass.showOutput", () => log.show());
  register("codeCompass.newConversation", async () => {
    answers.newConversation();
    await answers.reveal(false);
  });
  register("codeCompass.stopAnswer", () => answers.stop());
  register("codeCompass.showAnswers", () => answers.reveal(false));
  register("codeCompass.restartServer", () => server.restart());
  register("codeCompass.showStatus", () => status.showDetails());
  register(SHOW_REFERENCES, showReferences);

  // A new key must reach the server's environment: restart it.
  context.subscriptions.push(
    keys.onDidChange(() => {
      log.info("API key changed; restarting the server.");
      void server.restart();
    }),
    teamPassword.onDidChange(() => {
      log.info("Team index password changed; restarting the server.");
      void server.restart();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SECTION}.server`) || e.affectsConfiguration(`${SECTION}.teamIndex`)) {
        void vscode.window
          .showInformationMessage("Code Compass: the server settings changed.", "Restart Server")
          .then((c) => c && server.restart());
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart()),
  );

  // Both are optional editor features: absent APIs leave only a log line.
  for (const feature of [registerChatParticipant(server, log), registerMcpProvider(context, server, keys, log)]) {
    if (feature) context.subscriptions.push(feature);
  }

  void keys.noticeIfMissing(Boolean(process.env.ANTHROPIC_API_KEY));
  await server.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
}
