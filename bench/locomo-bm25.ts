/**
 * Plain BM25 (k1 1.2, b 0.75) over one conversation's turns, in memory: the floor the service's
 * retrieval is compared with. Tokens are the project's content-word stems, so the baseline and
 * the service agree on what a word is.
 */
import { contentStems } from '../server/src/text/tokens.js';

const K1 = 1.2;
const B = 0.75;

export class Bm25Index {
  private readonly docs: Array<Map<string, number>> = [];
  private readonly lengths: number[] = [];
  private readonly df = new Map<string, number>();
  private totalLength = 0;

  constructor(
    private readonly ids: string[],
    texts: string[],
  ) {
    for (const text of texts) {
      const tf = new Map<string, number>();
      const terms = contentStems(text);
      for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
      for (const term of tf.keys()) this.df.set(term, (this.df.get(term) ?? 0) + 1);
      this.docs.push(tf);
      this.lengths.push(terms.length);
      this.totalLength += terms.length;
    }
  }

  /** Ids of the best `limit` documents, best first (ties by document order). */
  search(query: string, limit: number): string[] {
    const n = this.docs.length;
    const average = this.totalLength / Math.max(1, n);
    const terms = [...new Set(contentStems(query))];
    const scored: Array<{ index: number; score: number }> = [];
    this.docs.forEach((tf, index) => {
      let score = 0;
      for (const term of terms) {
        const f = tf.get(term);
        if (!f) continue;
        const df = this.df.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score +=
          (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * (this.lengths[index] ?? 0)) / average));
      }
      if (score > 0) scored.push({ index, score });
    });
    scored.sort((a, b) => b.score - a.score || a.index - b.index);
    return scored.slice(0, limit).map(({ index }) => this.ids[index]!);
  }
}
