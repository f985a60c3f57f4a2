// Written by team-testing (src/testing/node/attribution.mjs).
export default async function* attribution(source) {
  let current = null;
  const roots = [];
  const stderr = new Map();
  const start = (data, synthetic) => {
    const node = { name: data.name, nesting: data.nesting, parent: current, children: [], synthetic };
    if (current) current.children.push(node); else roots.push(node);
    current = node;
  };
  for await (const event of source) {
    const data = event.data;
    if (event.type === 'test:stderr' && data.file) {
      const kept = stderr.get(data.file) ?? '';
      if (kept.length < 4096) stderr.set(data.file, kept + data.message);
      continue;
    }
    if (event.type === 'test:start') { start(data, false); continue; }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (!current) start({ name: 'root', nesting: 0 }, true);
    if (current.name !== data.name || current.nesting !== data.nesting) start(data, false);
    const test = current;
    if (current.nesting === data.nesting) current = current.parent;
    test.file = data.file ?? null;
    test.line = data.line ?? null;
  }
  function* leaves(node, suites) {
    if (node.children.length === 0) {
      yield JSON.stringify({ name: node.name, file: node.file ?? null, line: node.line ?? null, suites }) + '\n';
      return;
    }
    const inner = node.synthetic ? suites : [...suites, node.name];
    for (const child of node.children) yield* leaves(child, inner);
  }
  for (const root of roots) yield* leaves(root, []);
  for (const [file, text] of stderr) yield JSON.stringify({ stderr: file, text }) + '\n';
}
