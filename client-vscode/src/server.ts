/** Owns the LanguageClient: start, stop, restart, typed requests and the server's notifications. */
import * as vscode from "vscode";
import { LanguageClient, type LanguageClientOptions, type ServerOptions, State } from "vscode-languageclient/node";
import { type AnswerDelta, type IndexStateParams, Methods, type ProjectState } from "./protocol";
import { resolveServerCommand } from "./python";
import type { ServerCommand } from "./pythonEnv";
import { fixLens } from "./references";
import type { ApiKeyStore } from "./secrets";
import type { TeamIndexPassword } from "./teamIndex";
import { displayUrl, teamIndexEnv } from "./teamIndexEnv";
import { buildInitializationOptions, SECTION } from "./settings";

export type ServerPhase = "starting" | "running" | "stopped";

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private readonly phaseEmitter = new vscode.EventEmitter<ServerPhase>();
  private readonly indexEmitter = new vscode.EventEmitter<ProjectState[]>();
  private readonly deltaEmitter = new vscode.EventEmitter<AnswerDelta>();
  private readonly commandEmitter = new vscode.EventEmitter<ServerCommand | undefined>();
  readonly onDidChangePhase = this.phaseEmitter.event;
  readonly onIndexState = this.indexEmitter.event;
  readonly onAnswerDelta = this.deltaEmitter.event;
  /** Fires when a start has found (or failed to find) the server command; the MCP provider derives its own from it. */
  readonly onDidResolveCommand = this.commandEmitter.event;
  phase: ServerPhase = "stopped";
  command: ServerCommand | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly keys: ApiKeyStore,
    private readonly teamPassword?: TeamIndexPassword,
  ) {}

  private setPhase(phase: ServerPhase): void {
    this.phase = phase;
    this.phaseEmitter.fire(phase);
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.setPhase("starting");
    const cmd = await resolveServerCommand(this.context, this.log);
    this.command = cmd;
    this.commandEmitter.fire(cmd);
    if (!cmd) {
      this.setPhase("stopped");
      return;
    }
    const env: NodeJS.ProcessEnv = { ...process.env };
    const key = await this.keys.get();
    if (key) env.ANTHROPIC_API_KEY = key;
    const teamConfig = vscode.workspace.getConfiguration(SECTION);
    const teamUrl = teamConfig.get<string>("teamIndex.url", "");
    const team = teamIndexEnv(teamUrl, teamConfig.get<string>("teamIndex.project", ""), await this.teamPassword?.get());
    if (team.problem) void vscode.window.showWarningMessage(`Code Compass: ${team.problem}`);
    if (team.env.CODE_COMPASS_DATABASE_URL) this.log.info(`Serving from the team index at ${displayUrl(teamUrl)}`);
    Object.assign(env, team.env);
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      // No `transport`: TransportKind.stdio would append "--stdio" to our command line.
      options: { env, cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const config = vscode.workspace.getConfiguration(SECTION);
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => {
      const own = vscode.workspace.getConfiguration(SECTION, f.uri);
      return { uri: f.uri.toString(), get: (k: string) => own.get(k) };
    });
    const initializationOptions = buildInitializationOptions(
      this.context.storageUri?.fsPath,
      (k) => config.get(k),
      vscode.workspace.isTrusted,
      folders,
    );
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.log,
      initializationOptions,
      synchronize: { configurationSection: SECTION },
      middleware: {
        workspace: {
          // Send `settings: null`: the server then pulls the window's values and each
          // folder's (workspace/configuration with scopeUri), so per-folder values reach it.
          didChangeConfiguration: (_sections, next) => next(undefined),
        },
        // The status bar item is the one place that shows indexing (with its ETA): the
        // server's work-done progress would add a second, disagreeing item.
        handleWorkDoneProgress: () => undefined,
        provideCodeLenses: async (document, token, next) => (await next(document, token))?.map(fixLens),
        resolveCodeLens: async (lens, token, next) => {
          const resolved = await next(lens, token);
          return resolved ? fixLens(resolved) : resolved;
        },
      },
    };
    // Logged without secrets: the key is only in env, which is never logged.
    this.log.info(`Starting server: ${cmd.command} ${cmd.args.join(" ")}`);
    this.log.info(`initializationOptions: ${JSON.stringify(initializationOptions)}`);
    // The id "codeCompass" makes vscode-languageclient honour codeCompass.trace.server.
    const client = new LanguageClient("codeCompass", "Code Compass", serverOptions, clientOptions);
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.setPhase("running");
      else if (e.newState === State.Stopped) this.setPhase("stopped");
      else this.setPhase("starting");
    });
    client.onNotification(Methods.indexState, (p: IndexStateParams) => this.indexEmitter.fire(p?.projects ?? []));
    client.onNotification(Methods.answerDelta, (p: AnswerDelta) => this.deltaEmitter.fire(p));
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.log.error(`Server failed to start: ${String(err)}`);
      this.setPhase("stopped");
      void vscode.window
        .showErrorMessage("Code Compass: the server failed to start. See the output for details.", "Show Output")
        .then((c) => c && this.log.show());
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.log.warn(`Stopping the server: ${String(err)}`);
      }
      await client.dispose();
    }
    this.setPhase("stopped");
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    await this.start();
  }

  /** Send a request, starting the server first if needed. */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    if (!this.client || this.phase !== "running") await this.start();
    const client = this.client;
    if (!client || !client.isRunning()) throw new Error("The Code Compass server is not running. Use “Code Compass: Restart Server” or see the output.");
    // Never pass an undefined token: vscode-jsonrpc would send [params, null] by position.
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  dispose(): void {
    void this.stop();
    this.phaseEmitter.dispose();
    this.indexEmitter.dispose();
    this.deltaEmitter.dispose();
    this.commandEmitter.dispose();
  }
}
