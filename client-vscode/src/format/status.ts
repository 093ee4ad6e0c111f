/** Status bar text and details for the index state (pure, unit-tested). */
import type { ProjectState, StatusResult } from "../protocol";

export type Phase = "starting" | "indexing" | "embedding" | "ready" | "error" | "stopped";

export interface StatusView {
  phase: Phase;
  text: string;
  tooltip: string;
}

const fmt = new Intl.NumberFormat("en-US");

export function formatCount(n: number | undefined): string {
  return fmt.format(Number.isFinite(n) ? Math.max(0, Math.round(n as number)) : 0);
}

/** Percentage of chunks embedded, floor-rounded so 100% means really done. */
export function embeddedPercent(embedded: number, total: number): number {
  if (!(total > 0)) return 100;
  return Math.max(0, Math.min(100, Math.floor((embedded / total) * 100)));
}

/** "~40 s", "~3 min", "~1 h 20 min"; empty when unknown. */
export function formatEta(seconds: number | null | undefined): string {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "";
  if (seconds < 60) return `~${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `~${minutes} min`;
  return `~${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Files skipped, in total: the server sends them per reason ({"too_large": 2, "binary": 14}). */
export function skippedTotal(skipped: ProjectState["skipped"] | number | undefined): number {
  if (typeof skipped === "number") return Number.isFinite(skipped) ? skipped : 0;
  if (!skipped || typeof skipped !== "object") return 0;
  return Object.values(skipped).reduce((acc, n) => acc + (Number.isFinite(n) ? n : 0), 0);
}

/** "2 too large, 14 binary" (reasons as the server names them, underscores as spaces). */
export function skippedDetail(skipped: ProjectState["skipped"] | undefined): string {
  if (!skipped || typeof skipped !== "object") return "";
  return Object.entries(skipped)
    .filter(([, n]) => Number.isFinite(n) && n > 0)
    .map(([reason, n]) => `${formatCount(n)} ${reason.replace(/_/g, " ")}`)
    .join(", ");
}

function sum(projects: ProjectState[], key: "files" | "chunks" | "embedded" | "embedTotal"): number {
  return projects.reduce((acc, p) => acc + (Number.isFinite(p[key]) ? p[key] : 0), 0);
}

/** The slowest project's ETA decides: all embed at once on one worker, so the max is the honest one. */
function embeddingEta(projects: ProjectState[]): string {
  const etas = projects.map((p) => p.embedEtaS).filter((s): s is number => typeof s === "number" && Number.isFinite(s));
  return etas.length ? formatEta(Math.max(...etas)) : "";
}

/** One line for the status bar: the least advanced project decides the phase. */
export function statusView(projects: ProjectState[] | undefined, phaseOverride?: Phase): StatusView {
  if (phaseOverride === "starting") {
    return { phase: "starting", text: "$(loading~spin) Compass: starting", tooltip: "Code Compass server is starting" };
  }
  if (phaseOverride === "stopped") {
    return { phase: "stopped", text: "$(error) Compass stopped", tooltip: "Code Compass server is not running — click for details" };
  }
  const list = projects ?? [];
  const failing = list.filter((p) => p.state === "error");
  if (phaseOverride === "error" || failing.length) {
    const names = failing.map((p) => (p.lastError ? `${p.name}: ${p.lastError}` : p.name));
    return {
      phase: "error",
      text: "$(error) Compass error",
      tooltip: names.length ? `Indexing failed for ${names.join("; ")}` : "Code Compass server error — click for details",
    };
  }
  // A pass that failed earlier but left a usable index: still say so.
  const lastErrors = list.filter((p) => p.lastError).map((p) => `${p.name}: last pass failed: ${p.lastError}`);
  const warn = lastErrors.length ? `\n${lastErrors.join("\n")}` : "";
  const indexing = list.filter((p) => p.state === "indexing");
  if (indexing.length) {
    return {
      phase: "indexing",
      text: `$(sync~spin) Compass: indexing ${formatCount(sum(indexing, "files"))} files`,
      tooltip: `Indexing the workspace; search already works on what is indexed${warn}`,
    };
  }
  const embedding = list.filter((p) => p.state === "embedding");
  if (embedding.length) {
    const pct = embeddedPercent(sum(embedding, "embedded"), sum(embedding, "embedTotal"));
    const eta = embeddingEta(embedding);
    return {
      phase: "embedding",
      text: `$(sync~spin) Compass: embeddings ${pct}%${eta ? ` · ${eta}` : ""}`,
      tooltip: `Computing embeddings in the background${eta ? ` (${eta} left)` : ""}; lexical search works meanwhile${warn}`,
    };
  }
  if (!list.length) {
    return { phase: "starting", text: "$(loading~spin) Compass: starting", tooltip: "Waiting for the index state" };
  }
  const skipped = list.reduce((acc, p) => acc + skippedTotal(p.skipped), 0);
  return {
    phase: "ready",
    text: lastErrors.length ? "$(warning) Compass ready" : "$(check) Compass ready",
    tooltip:
      `${formatCount(sum(list, "files"))} files, ${formatCount(sum(list, "chunks"))} chunks indexed` +
      (skipped ? `, ${formatCount(skipped)} skipped` : "") +
      warn,
  };
}

export interface DetailItem {
  label: string;
  description: string;
  detail?: string;
}

/** The lines shown when the status item is clicked. */
export function statusDetails(status: Pick<StatusResult, "model" | "llmConfigured" | "storage"> & { projects: ProjectState[] }): DetailItem[] {
  const items: DetailItem[] = status.projects.map((p) => {
    const pct = embeddedPercent(p.embedded, p.embedTotal);
    const skipped = skippedTotal(p.skipped);
    const eta = p.state === "embedding" ? formatEta(p.embedEtaS) : "";
    const extra = [
      eta ? `${eta} left` : "",
      p.errors ? `${formatCount(p.errors)} errors` : "",
      skipped ? `${formatCount(skipped)} skipped (${skippedDetail(p.skipped)})` : "",
      p.lastError ? `last error: ${p.lastError}` : "",
    ].filter(Boolean);
    return {
      label: `$(folder) ${p.name}`,
      description: p.state,
      detail:
        `${formatCount(p.files)} files · ${formatCount(p.chunks)} chunks · embedded ${pct}% ` +
        `(${formatCount(p.embedded)}/${formatCount(p.embedTotal)})` +
        (extra.length ? ` · ${extra.join(" · ")}` : ""),
    };
  });
  items.push({ label: "$(symbol-misc) Embedding model", description: status.model ?? "none" });
  items.push({
    label: status.llmConfigured ? "$(pass) LLM configured" : "$(info) LLM not configured",
    description: status.llmConfigured ? "answers are written by the model from the evidence" : "answers are extractive until an API key is set",
  });
  if (status.storage) items.push({ label: "$(database) Index storage", description: status.storage });
  return items;
}
