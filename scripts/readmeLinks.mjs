// Link rewriting for the README packed into the .vsix (scripts/package.mjs).
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/**
 * The README for the .vsix: `text` (Markdown written at `fromFile`, a path inside the repository `root`)
 * with every relative link resolved against that file and rewritten for the package root. Images
 * must be files of the staged package (`stageDir`); with `repoUrl` (https://github.com/OWNER/NAME)
 * images become `<repoUrl>/raw/HEAD/<path>` and other relative links `<repoUrl>/blob/HEAD/<path>`
 * (the file must exist in the repository). Returns { text, problems }: one message per link that
 * cannot be made to resolve.
 * @param {string} text @param {string} fromFile @param {string} root @param {string} stageDir @param {string} [repoUrl]
 * @returns {{ text: string, problems: string[] }}
 */
export function packagedReadme(text, fromFile, root, stageDir, repoUrl) {
  const problems = [];
  const out = text.replace(/(!?)\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, bang, label, target) => {
    if (/^(#|https:|mailto:)/.test(target)) return whole;
    if (/^[a-z]+:/i.test(target)) {
      problems.push(`${target}: only https: links, #anchors and relative paths are allowed`);
      return whole;
    }
    const [file, anchor = ""] = target.split(/(?=#)/);
    const rel = relative(root, resolve(dirname(join(root, fromFile)), file))
      .split(sep)
      .join("/");
    if (rel.startsWith("../") || !existsSync(join(root, rel))) {
      problems.push(`${target}: ${rel} is not a file of the repository`);
      return whole;
    }
    if (bang) {
      if (!existsSync(join(stageDir, rel))) {
        problems.push(`${target}: the image ${rel} is not packed into the .vsix`);
        return whole;
      }
      return `${bang}[${label}](${repoUrl ? `${repoUrl}/raw/HEAD/${rel}` : rel}${anchor})`;
    }
    if (!repoUrl) {
      problems.push(
        `${target}: a link to ${rel} needs a repository URL in package.json (the details page cannot open repository files)`,
      );
      return whole;
    }
    return `[${label}](${repoUrl}/blob/HEAD/${rel}${anchor})`;
  });
  return { text: out, problems };
}
