/** The answer view: one webview panel holding one conversation (conversationId kept per panel). */
import { randomBytes, randomUUID } from "node:crypto";
import * as vscode from "vscode";
import { resolveCitation } from "./locations";
import { openWireLocation } from "./open";
import { type Answer, type AnswerDelta, type AskParams, Methods } from "./protocol";
import { renderConversation, renderPage, type Turn } from "./render/answer";
import type { ServerController } from "./server";

type FromWebview =
  | { type: "ready" }
  | { type: "ask"; query: string }
  | { type: "openCitation"; turn: number; id: string }
  | { type: "openEvidence"; turn: number; id: string };

export type AskContext = Pick<AskParams, "activeFile" | "selection">;

export class AnswerPanel implements vscode.Disposable {
  private static current: AnswerPanel | undefined;
  private readonly panel: vscode.WebviewPanel;
  private conversationId = randomUUID();
  private turns: Turn[] = [];
  private busy = false;
  private requestId: string | undefined;
  private renderTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  static show(extensionUri: vscode.Uri, server: ServerController): AnswerPanel {
    if (AnswerPanel.current) {
      AnswerPanel.current.panel.reveal(undefined, true);
      return AnswerPanel.current;
    }
    AnswerPanel.current = new AnswerPanel(extensionUri, server);
    return AnswerPanel.current;
  }

  static get active(): AnswerPanel | undefined {
    return AnswerPanel.current;
  }

  private constructor(
    extensionUri: vscode.Uri,
    private readonly server: ServerController,
  ) {
    const media = vscode.Uri.joinPath(extensionUri, "media");
    this.panel = vscode.window.createWebviewPanel(
      "codeCompass.answer",
      "Code Compass",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
      { enableScripts: true, localResourceRoots: [media], retainContextWhenHidden: true },
    );
    const webview = this.panel.webview;
    webview.html = renderPage(
      {
        cspSource: webview.cspSource,
        nonce: randomBytes(16).toString("base64"),
        scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "answer.js")).toString(),
        styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "answer.css")).toString(),
      },
      renderConversation([]),
    );
    this.disposables.push(
      webview.onDidReceiveMessage((msg: FromWebview) => this.onMessage(msg)),
      server.onAnswerDelta((d) => this.onDelta(d)),
      this.panel.onDidDispose(() => this.dispose()),
    );
  }

  private onMessage(msg: FromWebview): void {
    switch (msg?.type) {
      case "ready":
        this.render(true);
        break;
      case "ask":
        if (typeof msg.query === "string" && msg.query.trim()) void this.ask(msg.query.trim());
        break;
      case "openCitation":
      case "openEvidence":
        void this.open(msg.turn, msg.id);
        break;
    }
  }

  private async open(turnIndex: number, id: string): Promise<void> {
    const answer = this.turns[turnIndex]?.answer;
    if (!answer || typeof id !== "string") return;
    const loc = resolveCitation(id, answer.citations ?? [], answer.evidences ?? []);
    if (!loc) return;
    // Open in a text editor group, never over the answer, so the conversation stays visible.
    const column = vscode.window.visibleTextEditors.find((e) => e.viewColumn !== this.panel.viewColumn)?.viewColumn;
    await openWireLocation(loc, { preview: true, viewColumn: column ?? vscode.ViewColumn.One });
  }

  private onDelta(delta: AnswerDelta): void {
    const last = this.turns[this.turns.length - 1];
    if (!this.busy || !last || last.answer || typeof delta?.text !== "string") return;
    const mine =
      (delta.requestId !== undefined && delta.requestId === this.requestId) ||
      (delta.conversationId !== undefined && delta.conversationId === this.conversationId);
    if (!mine) return;
    last.streamed += delta.text;
    // Deltas can arrive per token: coalesce re-renders.
    this.renderTimer ??= setTimeout(() => {
      this.renderTimer = undefined;
      this.render();
    }, 50);
  }

  private render(scroll = false): void {
    void this.panel.webview.postMessage({ type: "render", html: renderConversation(this.turns), scroll });
    void this.panel.webview.postMessage({ type: "busy", busy: this.busy });
  }

  async ask(query: string, context: AskContext = {}): Promise<void> {
    if (this.busy) {
      void vscode.window.showInformationMessage("Code Compass is still answering the previous question.");
      return;
    }
    this.panel.reveal(undefined, false);
    const turn: Turn = { question: query, streamed: "" };
    this.turns.push(turn);
    this.busy = true;
    this.render(true);
    this.requestId = randomUUID();
    const params: AskParams = { query, conversationId: this.conversationId, requestId: this.requestId, ...context };
    try {
      turn.answer = await this.server.request<Answer>(Methods.ask, params);
    } catch (err) {
      turn.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.busy = false;
      if (this.renderTimer) clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
      this.render(true);
    }
  }

  newConversation(): void {
    this.conversationId = randomUUID();
    this.turns = [];
    this.render();
    void this.panel.webview.postMessage({ type: "focusInput" });
  }

  dispose(): void {
    if (AnswerPanel.current === this) AnswerPanel.current = undefined;
    if (this.renderTimer) clearTimeout(this.renderTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}
