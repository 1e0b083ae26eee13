import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * The doc page of a rule: `docs/rules/GPUnnn.md`, shipped with the extension one folder above the
 * bundle (dist/), as a file URL that VS Code opens in an editor.
 */
export function docUrl(code: string): string {
  return pathToFileURL(resolve(__dirname, "..", "docs", "rules", `${code}.md`)).href;
}

/** The fields of package.json that say where the project lives. */
export interface ProjectLinks {
  repository?: string | { type?: string; url?: string; directory?: string };
  homepage?: string;
}

/** `https://host/owner/name` of a forge (GitHub, GitLab, Bitbucket) URL or npm shorthand, else null. */
function forgeWebUrl(spec: string): { web: string; host: string } | null {
  const short = /^(?:(github|gitlab|bitbucket):)?([\w.-]+)\/([\w.-]+?)(?:\.git)?$/.exec(spec);
  if (short) {
    const host = { github: "github.com", gitlab: "gitlab.com", bitbucket: "bitbucket.org" }[short[1] ?? "github"]!;
    return { web: `https://${host}/${short[2]}/${short[3]}`, host };
  }
  const m =
    /^(?:git\+)?(?:https?|ssh|git):\/\/(?:[^@/]+@)?([^/:]+)(?::\d+)?\/(.+?)(?:\.git)?\/?(?:#.*)?$/.exec(spec) ??
    /^(?:[^@/]+@)?([^/:]+):(?!\/)(.+?)(?:\.git)?$/.exec(spec); // scp-like git@github.com:owner/name.git
  if (!m) return null;
  const host = m[1].toLowerCase();
  if (!/(^|\.)(github\.com|gitlab\.com|bitbucket\.org)$/.test(host) && !host.startsWith("gitlab.")) return null;
  const parts = m[2].split("/").filter(Boolean);
  if (parts.length < 2) return null;
  return { web: `https://${host}/${parts.join("/")}`, host };
}

/** A file of the repository's default branch as the forge shows it. */
function forgeFileUrl(forge: { web: string; host: string }, path: string): string {
  if (forge.host.startsWith("gitlab")) return `${forge.web}/-/blob/HEAD/${path}`;
  if (forge.host === "bitbucket.org") return `${forge.web}/src/HEAD/${path}`;
  return `${forge.web}/blob/HEAD/${path}`;
}

/**
 * The page of a rule's documentation that anyone can open, for the CLI's reports (JSON `url`,
 * SARIF `helpUri`): `docs/rules/GPUnnn.md` in the project's repository as its forge shows it, from
 * package.json's `repository` (URL, `git+https:`, `git@host:`, `github:owner/name` or `owner/name`,
 * and its `directory`), else a forge `homepage` (`https://github.com/owner/name#readme`), else
 * `<homepage>/docs/rules/GPUnnn.md` for a homepage that is a documentation site. Null when
 * package.json names neither, or for a code without a page (GPU000): never a file:// URL into a
 * local copy, which no one else can open.
 */
export function ruleDocsWebUrl(code: string, links: ProjectLinks): string | null {
  if (!/^GPU\d{3}$/.test(code) || code === "GPU000") return null;
  const page = `docs/rules/${code}.md`;
  const repo = typeof links.repository === "string" ? { url: links.repository } : links.repository;
  const forge = repo?.url ? forgeWebUrl(repo.url.trim()) : null;
  if (forge) {
    const dir = (repo?.directory ?? "").replace(/^\/+|\/+$/g, "");
    return forgeFileUrl(forge, dir ? `${dir}/${page}` : page);
  }
  const home = links.homepage?.trim();
  if (!home || !/^https?:\/\//.test(home)) return null;
  const homeForge = forgeWebUrl(home.replace(/#.*$/, "").replace(/\/+$/, ""));
  if (homeForge) return forgeFileUrl(homeForge, page);
  return `${home.replace(/#.*$/, "").replace(/\/+$/, "")}/${page}`;
}

let ownLinks: ProjectLinks | undefined;
/**
 * GPU Pilot's own package.json links: the nearest package.json named gpu-pilot above this code
 * (dist/ in the package, server/src in a clone), read once; empty when there is none.
 */
export function ownProjectLinks(): ProjectLinks {
  if (ownLinks) return ownLinks;
  ownLinks = {};
  for (let dir = __dirname, i = 0; i < 4; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as ProjectLinks & { name?: string };
      if (pkg.name === "gpu-pilot") {
        ownLinks = { repository: pkg.repository, homepage: pkg.homepage };
        break;
      }
    } catch {
      /* none here: look higher */
    }
  }
  return ownLinks;
}
