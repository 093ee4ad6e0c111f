// A language model for the end-to-end test only. The editor's chat view invokes a chat
// participant only when some language model exists (it passes one in every request), and an
// offline editor has none: this one fills that slot. @compass never calls it; it answers
// through the Code Compass server.
const vscode = require("vscode");

const MODEL = {
  id: "e2e-fake-model",
  name: "E2E Fake Model",
  family: "e2e-fake",
  version: "1",
  maxInputTokens: 100000,
  maxOutputTokens: 1000,
  capabilities: { toolCalling: true },
};

// VS Code 1.139's built-in theme ids; undefined: back to the default.
const THEMES = {
  darkModern: "Dark Modern",
  lightModern: "Light Modern",
  darkHighContrast: "Default High Contrast",
  lightHighContrast: "Default High Contrast Light",
  default: undefined,
};

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider("e2e-fake", {
      provideLanguageModelChatInformation: () => [MODEL],
      provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
        progress.report(new vscode.LanguageModelTextPart("(fake model: no answer)"));
      },
      provideTokenCount: async (_model, text) => String(typeof text === "string" ? text : "").length,
    }),
    // The model picker offers only Copilot's sign-in while signed out; the chat.open command
    // can select a model by vendor, which is all the test needs.
    vscode.commands.registerCommand("e2eFakeModel.selectInChat", () =>
      vscode.commands.executeCommand("workbench.action.chat.open", { modelSelector: { vendor: "e2e-fake" } }),
    ),
    // The theme check switches themes through the configuration service: editing the settings
    // file depends on a file watcher, which did not fire in code-server here.
    ...Object.entries(THEMES).map(([key, id]) =>
      vscode.commands.registerCommand(`e2eFakeModel.theme.${key}`, () =>
        vscode.workspace.getConfiguration("workbench").update("colorTheme", id, vscode.ConfigurationTarget.Global),
      ),
    ),
  );
};
