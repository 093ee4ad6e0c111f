/** The team index's password in SecretStorage (never in settings), and the commands that set it. */
import * as vscode from "vscode";

const KEY = "codeCompass.teamIndexPassword";

export class TeamIndexPassword {
  readonly onDidChange: vscode.Event<void>;
  private readonly emitter = new vscode.EventEmitter<void>();

  constructor(private readonly context: vscode.ExtensionContext) {
    this.onDidChange = this.emitter.event;
    context.subscriptions.push(
      this.emitter,
      context.secrets.onDidChange((e) => {
        if (e.key === KEY) this.emitter.fire();
      }),
    );
  }

  get(): Thenable<string | undefined> {
    return this.context.secrets.get(KEY);
  }

  async promptAndStore(): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: "Code Compass: Team Index Password",
      prompt: "The password of the role in codeCompass.teamIndex.url. Stored in VS Code's secret storage and given only to the Code Compass server process.",
      password: true,
      ignoreFocusOut: true,
    });
    if (!value) return false;
    await this.context.secrets.store(KEY, value);
    void vscode.window.showInformationMessage("Code Compass: team index password saved; the server restarts with it.");
    return true;
  }

  async clear(): Promise<void> {
    await this.context.secrets.delete(KEY);
    void vscode.window.showInformationMessage("Code Compass: team index password removed.");
  }
}
