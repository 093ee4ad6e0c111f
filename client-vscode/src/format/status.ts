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

function sum(projects: ProjectState[], key: "files" | "chunks" | "embedded" | "embedTotal" | "errors" | "skipped"): number {
  return projects.reduce((acc, p) => acc + (Number.isFinite(p[key]) ? p[key] : 0), 0);
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
  if (phaseOverride === "error" || list.some((p) => p.state === "error")) {
    const failing = list.filter((p) => p.state === "error").map((p) => p.message ? `${p.name}: ${p.message}` : p.name);
    return {
      phase: "error",
      text: "$(error) Compass error",
      tooltip: failing.length ? `Indexing failed for ${failing.join(", ")}` : "Code Compass server error — click for details",
    };
  }
  const indexing = list.filter((p) => p.state === "indexing");
  if (indexing.length) {
    const files = sum(indexing, "files");
    const totals = indexing.map((p) => p.filesTotal);
    const total = totals.every((t) => typeof t === "number" && t > 0) ? (totals as number[]).reduce((a, b) => a + b, 0) : 0;
    const count = total > 0 ? `${formatCount(files)}/${formatCount(total)}` : `${formatCount(files)} files`;
    return { phase: "indexing", text: `$(sync~spin) Compass: indexing ${count}`, tooltip: "Indexing the workspace; search already works on what is indexed" };
  }
  const embedding = list.filter((p) => p.state === "embedding");
  if (embedding.length) {
    const pct = embeddedPercent(sum(embedding, "embedded"), sum(embedding, "embedTotal"));
    return {
      phase: "embedding",
      text: `$(sync~spin) Compass: embeddings ${pct}%`,
      tooltip: "Computing embeddings in the background; lexical search works meanwhile",
    };
  }
  if (!list.length) {
    return { phase: "starting", text: "$(loading~spin) Compass: starting", tooltip: "Waiting for the index state" };
  }
  return {
    phase: "ready",
    text: "$(check) Compass ready",
    tooltip: `${formatCount(sum(list, "files"))} files, ${formatCount(sum(list, "chunks"))} chunks indexed`,
  };
}

export interface DetailItem {
  label: string;
  description: string;
  detail?: string;
}

/** The lines shown when the status item is clicked. */
export function statusDetails(status: StatusResult): DetailItem[] {
  const items: DetailItem[] = status.projects.map((p) => {
    const pct = embeddedPercent(p.embedded, p.embedTotal);
    const extra = [
      p.errors ? `${formatCount(p.errors)} errors` : "",
      p.skipped ? `${formatCount(p.skipped)} skipped` : "",
      p.message ?? "",
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
