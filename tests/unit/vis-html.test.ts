import { describe, expect, it } from 'vitest';
import { renderGraphHtml, scriptSafeJson } from '../../ts/vis/html.js';

const EVIL = '</script><script>alert(1)</script><img src=x onerror=alert(2)> & \u2028 <!-- "quote"';

describe('visualisation page (docs/method.md §7.5)', () => {
  const html = renderGraphHtml({
    title: 'Graph of <b>evil</b>',
    nodes: [
      { id: 'a', type: 'entity', text: EVIL, score: 2 },
      { id: 'b', type: 'text', text: 'plain', score: 1 },
    ],
    edges: [{ source: 'a', target: 'b', weight: 1 }],
  });

  it('escapes every piece of document text: no executable markup from the corpus', () => {
    // Strip the inlined library (trusted, from node_modules) and look at the rest.
    const withoutLibrary = html.replace(/<script>[\s\S]*?<\/script>/, '<script>LIB</script>');
    expect(withoutLibrary).not.toContain('alert(1)</script>');
    expect(withoutLibrary).not.toContain('<img');
    expect(withoutLibrary).not.toContain('<b>');
    expect(withoutLibrary).not.toContain('\u2028');
    // Exactly the page's own script elements: data, library, page logic.
    expect(withoutLibrary.match(/<script/g)).toHaveLength(3);
    expect(withoutLibrary.match(/<\/script>/g)).toHaveLength(3);
  });

  it('round-trips the text through the embedded JSON', () => {
    const json = /<script type="application\/json" id="graph-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    const data = JSON.parse(json) as { nodes: { tip: string; size: number; color: string }[] };
    expect(data.nodes[0]!.tip).toBe(`entity\n${EVIL}`);
    expect(data.nodes[0]!.size).toBe(40);
    expect(data.nodes[1]!.size).toBe(25);
    expect(data.nodes[0]!.color).toBe('#ADD8E6');
  });

  it('cuts a long tooltip at 1,000 characters without splitting an emoji, and draws 200,000 nodes', () => {
    const text = `${'x'.repeat(999)}🔭 and more`;
    const page = renderGraphHtml({
      title: 't',
      nodes: [{ id: 'a', type: 'text', text, score: 1 }],
      edges: [],
    });
    const json = /<script type="application\/json" id="graph-data">([\s\S]*?)<\/script>/.exec(page)![1]!;
    expect((JSON.parse(json) as { nodes: { tip: string }[] }).nodes[0]!.tip).toBe(
      `text\n${'x'.repeat(999)}🔭…`,
    );
    // The largest score is found without spreading every score into one call (a stack overflow).
    const many = Array.from({ length: 200_000 }, (_, i) => ({
      id: `n${i}`,
      type: 'entity' as const,
      text: 'x',
      score: i,
    }));
    expect(() => renderGraphHtml({ title: 'big', nodes: many, edges: [] })).not.toThrow();
  });

  it('is self-contained: no external scripts, styles or fonts', () => {
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href=/);
    expect(html).toContain('vis.Network');
  });

  it('scriptSafeJson escapes the five dangerous characters', () => {
    expect(scriptSafeJson('<>&\u2028\u2029')).toBe('"\\u003c\\u003e\\u0026\\u2028\\u2029"');
  });
});
