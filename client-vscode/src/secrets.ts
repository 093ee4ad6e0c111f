/** The Anthropic API key lives in SecretStorage only; it reaches the server through its environment. */
import * as vscode from "vscode";

const KEY = "codeCompass.anthropicApiKey";
const NOTICE_FLAG = "codeCompass.noKeyNoticeShown";

/** One secret in VS Code's SecretStorage, and an event when it changes (here or in another window). */
export class StoredSecret {
  readonly onDidChange: vscode.Event<void>;
  private readonly emitter = new vscode.EventEmitter<void>();

  constructor(
    protected readonly context: vscode.ExtensionContext,
    private readonly key: string,
  ) {
    this.onDidChange = this.emitter.event;
    context.subscriptions.push(
      this.emitter,
      context.secrets.onDidChange((e) => {
        if (e.key === key) this.emitter.fire();
      }),
    );
  }

  get(): Thenable<string | undefined> {
    return this.context.secrets.get(this.key);
  }

  protected async store(value: string, saved: string): Promise<void> {
    await this.context.secrets.store(this.key, value);
    void vscode.window.showInformationMessage(saved);
  }

  protected async remove(removed: string): Promise<void> {
    await this.context.secrets.delete(this.key);
    void vscode.window.showInformationMessage(removed);
  }
}

export class ApiKeyStore extends StoredSecret {
  constructor(context: vscode.ExtensionContext) {
    super(context, KEY);
  }

  async promptAndStore(): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: "Code Compass: Anthropic API Key",
      prompt: "Stored in VS Code's secret storage and given only to the Code Compass server process.",
      password: true,
      ignoreFocusOut: true,
      placeHolder: "sk-ant-…",
      validateInput: (v) => (v.trim().length < 8 ? "That does not look like an API key." : undefined),
    });
    if (!value) return false;
    await this.store(value.trim(), "Code Compass: API key saved. Answers will now be written by the model from the evidence.");
    return true;
  }

  clear(): Promise<void> {
    return this.remove("Code Compass: API key removed. Answers will be extractive until a key is set.");
  }

  /** Once per install: say politely that answers are extractive without a key. */
  async noticeIfMissing(envHasKey: boolean): Promise<void> {
    if (envHasKey || (await this.get()) || this.context.globalState.get<boolean>(NOTICE_FLAG)) return;
    await this.context.globalState.update(NOTICE_FLAG, true);
    const choice = await vscode.window.showInformationMessage(
      "Code Compass works without an API key: search, hovers and answers all run, but answers are extractive (quoted from the evidence) until an Anthropic API key is set.",
      "Set API Key",
    );
    if (choice === "Set API Key") await this.promptAndStore();
  }
}
