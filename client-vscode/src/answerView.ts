/**
 * The answer view: a chat in the panel (a WebviewView in the "Code Compass" view container),
 * not an editor tab. It keeps the conversations in the workspace state, so they survive a
 * window reload; the webview only renders what this class sends and routes clicks back.
 */
import { randomBytes, randomUUID } from "node:crypto";
import * as vscode from "vscode";
import {
  askParams,
  type Conversation,
  conversationTitle,
  forkAt,
  fromStored,
  newConversation,
  toStored,
  type Turn,
  type TurnContext,
} from "./conversation";
import { resolveCitation } from "./locations";
import { openWireLocation } from "./open";
import { type Answer, type AnswerDelta, Methods, type StatusResult } from "./protocol";
import { renderConversation, renderPage } from "./render/answer";
import type { ServerController } from "./server";
import { answerActions } from "./suggestions";

export const ANSWER_VIEW_ID = "codeCompass.answers";
const STORE_KEY = "codeCompass.conversations";
const RENDER_COALESCE_MS = 50;

type FromWebview =
  | { type: "ready" }
  | { type: "ask"; query: string }
  | { type: "edit"; turn: number; query: string }
  | { type: "retry"; turn: number }
  | { type: "stop" }
  | { type: "copyAnswer"; turn: number }
  | { type: "copy"; text: string }
  | { type: "openCitation" | "openEvidence"; turn: number; id: string }
  | { type: "suggestion"; turn: number; index: number }
  | { type: "setApiKey" }
  | { type: "newConversation" }
  | { type: "switchConversation"; id: string };

export type AskContext = TurnContext;

interface Running {
  cts: vscode.CancellationTokenSource;
  requestId: string;
  turn: Turn;
  stoppedAt?: number;
}

/** JSON-RPC's "request cancelled": what the server answers a $/cancelRequest with. */
const REQUEST_CANCELLED = -32800;

export class AnswerView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private current: Conversation;
  private past: Conversation[];
  private running: Running | undefined;
  private renderTimer: NodeJS.Timeout | undefined;
  private llmConfigured: boolean | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerController,
    private readonly log: vscode.LogOutputChannel,
  ) {
    const stored = fromStored(context.workspaceState.get(STORE_KEY), randomUUID);
    this.current = stored.current;
    this.past = stored.past;
    this.disposables.push(
      server.onAnswerDelta((d) => this.onDelta(d)),
      server.onDidChangePhase((phase) => {
        if (phase !== "running") return;
        // A new server process knows no conversation: send the history next time.
        this.current.serverKnows = false;
        void this.refreshLlm();
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, "media");
    const webview = view.webview;
    webview.options = { enableScripts: true, localResourceRoots: [media] };
    webview.html = renderPage(
      {
        cspSource: webview.cspSource,
        nonce: randomBytes(16).toString("base64"),
        scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "answer.js")).toString(),
        styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "answer.css")).toString(),
      },
      renderConversation(this.current.turns, { llmConfigured: this.llmConfigured }),
    );
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
    webview.onDidReceiveMessage((msg: FromWebview) => void this.onMessage(msg));
  }

  /** Show the view (resolving it if it never was), without taking focus from the editor. */
  async reveal(preserveFocus = true): Promise<void> {
    if (this.view) this.view.show(preserveFocus);
    else await vscode.commands.executeCommand(`${ANSWER_VIEW_ID}.focus`, { preserveFocus });
  }

  private async onMessage(msg: FromWebview): Promise<void> {
    switch (msg?.type) {
      case "ready":
        this.render(true);
        break;
      case "ask":
        if (typeof msg.query === "string" && msg.query.trim()) await this.ask(msg.query.trim());
        break;
      case "edit":
        if (typeof msg.query === "string" && msg.query.trim()) await this.resend(msg.turn, msg.query.trim());
        break;
      case "retry":
        await this.resend(msg.turn);
        break;
      case "stop":
        this.stop();
        break;
      case "copyAnswer": {
        const text = this.current.turns[msg.turn]?.answer?.answer;
        if (text) await this.copy(text, "Answer copied.");
        break;
      }
      case "copy":
        if (typeof msg.text === "string") await this.copy(msg.text, "Code copied.");
        break;
      case "openCitation":
      case "openEvidence":
        await this.open(msg.turn, msg.id);
        break;
      case "suggestion":
        await this.suggestion(msg.turn, msg.index);
        break;
      case "setApiKey":
        await vscode.commands.executeCommand("codeCompass.setApiKey");
        break;
      case "newConversation":
        this.newConversation();
        break;
      case "switchConversation":
        this.switchTo(msg.id);
        break;
    }
  }

  private async copy(text: string, message: string): Promise<void> {
    await vscode.env.clipboard.writeText(text);
    void vscode.window.setStatusBarMessage(`Code Compass: ${message}`, 2000);
  }

  private async open(turnIndex: number, id: string): Promise<void> {
    const answer = this.current.turns[turnIndex]?.answer;
    if (!answer || typeof id !== "string") return;
    const loc = resolveCitation(id, answer.citations ?? [], answer.evidences ?? []);
    if (loc) await openWireLocation(loc, { preview: true });
  }

  private async suggestion(turnIndex: number, index: number): Promise<void> {
    const turn = this.current.turns[turnIndex];
    const view = answerActions(turn?.answer)[index];
    if (!turn || !view) return;
    if (view.action === "open") await openWireLocation(view.location, { preview: true });
    else if (view.action === "scope") await this.ask(turn.question, { ...turn.context, ...view.scope });
    else if (view.action === "ask") await this.ask(view.query);
  }

  private async refreshLlm(): Promise<void> {
    try {
      const status = await this.server.request<StatusResult>(Methods.status, {});
      this.llmConfigured = Boolean(status?.llmConfigured);
    } catch {
      this.llmConfigured = undefined;
    }
  }

  private onDelta(delta: AnswerDelta): void {
    const run = this.running;
    if (!run || delta?.requestId !== run.requestId || typeof delta.text !== "string") return;
    run.turn.streamed += delta.text;
    run.turn.phase = "streaming";
    // Deltas can arrive per token: coalesce re-renders.
    this.renderTimer ??= setTimeout(() => {
      this.renderTimer = undefined;
      this.render();
    }, RENDER_COALESCE_MS);
  }

  private render(scroll = false): void {
    const view = this.view;
    if (!view) return;
    const html = renderConversation(this.current.turns, { llmConfigured: this.llmConfigured });
    void view.webview.postMessage({ type: "render", html, scroll });
    void view.webview.postMessage({ type: "busy", busy: this.running !== undefined });
    const conversations = [this.current, ...this.past]
      .filter((c) => c === this.current || c.turns.length)
      .map((c) => ({ id: c.id, title: conversationTitle(c), current: c === this.current }));
    void view.webview.postMessage({ type: "conversations", conversations });
  }

  private save(): void {
    void this.context.workspaceState.update(STORE_KEY, toStored(this.current, this.past));
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Ask `query` as the next turn of the current conversation. */
  async ask(query: string, context: AskContext = {}): Promise<void> {
    if (this.running) {
      void vscode.window.showInformationMessage("Code Compass is still answering: stop it or wait for the answer.");
      return;
    }
    const turn: Turn = { question: query, phase: "searching", streamed: "" };
    if (Object.values(context).some((v) => v !== undefined)) turn.context = context;
    this.current.turns.push(turn);
    this.current.updated = Date.now();
    await this.run(turn);
  }

  /** Edit (a new question) or retry (the same) turn `index`: later turns are dropped. */
  async resend(index: number, query?: string): Promise<void> {
    const turn = this.current.turns[index];
    if (!turn || this.running) return;
    this.current = forkAt(this.current, index, randomUUID());
    await this.ask(query ?? turn.question, turn.context ?? {});
  }

  private async run(turn: Turn): Promise<void> {
    const cts = new vscode.CancellationTokenSource();
    const requestId = randomUUID();
    const run: Running = { cts, requestId, turn };
    this.running = run;
    turn.requestId = requestId;
    if (this.llmConfigured === undefined) void this.refreshLlm().then(() => this.render());
    void this.reveal();
    this.render(true);
    const params = askParams(this.current, requestId);
    try {
      const answer = await this.server.request<Answer>(Methods.ask, params, cts.token);
      if (this.running !== run) {
        // Stopped meanwhile (the stop already rendered): the server finished it anyway.
        this.afterStop(run, "the server answered anyway");
        return;
      }
      turn.answer = answer;
      turn.phase = "done";
      this.current.serverKnows = true;
    } catch (err) {
      if (this.running !== run) {
        const code = (err as { code?: unknown } | undefined)?.code;
        this.afterStop(run, code === REQUEST_CANCELLED ? "cancelled by the server (RequestCancelled)" : `ended with an error: ${String(err)}`);
        return;
      }
      turn.error = err instanceof Error ? err.message : String(err);
      turn.phase = "error";
      this.log.warn(`ask failed: ${turn.error}`);
    } finally {
      if (this.running === run) this.finish();
      cts.dispose();
    }
  }

  private afterStop(run: Running, what: string): void {
    const ms = run.stoppedAt === undefined ? 0 : Date.now() - run.stoppedAt;
    this.log.info(`ask ${run.requestId}: ${what} ${ms} ms after stop`);
  }

  private finish(): void {
    this.running = undefined;
    if (this.renderTimer) clearTimeout(this.renderTimer);
    this.renderTimer = undefined;
    this.render(true);
    this.save();
  }

  /** Stop the running answer: the request is cancelled ($/cancelRequest) and the view stops waiting at once. */
  stop(): void {
    const run = this.running;
    if (!run) return;
    run.stoppedAt = Date.now();
    run.cts.cancel();
    run.turn.phase = "stopped";
    this.log.info(`ask ${run.requestId} stopped by the user`);
    this.finish();
  }

  newConversation(): void {
    if (this.running) this.stop();
    if (this.current.turns.length) this.past.unshift(this.current);
    this.current = newConversation(randomUUID());
    this.save();
    this.render();
    void this.view?.webview.postMessage({ type: "focusInput" });
  }

  private switchTo(id: string): void {
    const found = this.past.find((c) => c.id === id);
    if (!found || this.running) return;
    this.past = this.past.filter((c) => c !== found);
    if (this.current.turns.length) this.past.unshift(this.current);
    this.current = found;
    this.save();
    this.render(true);
  }

  dispose(): void {
    this.running?.cts.cancel();
    if (this.renderTimer) clearTimeout(this.renderTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
