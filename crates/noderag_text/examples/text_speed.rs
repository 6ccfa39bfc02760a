//! Speed of the text core on a real corpus:
//!   cargo run --release -p noderag_text --example text_speed -- [corpus.json [chunk_size]]
//! The corpus defaults to the HotpotQA-100 sample kept in the repository,
//! bench/data/hotpotqa/corpus.json. The corpus (HotpotQA `{title: [sentences]}`) is
//! concatenated as `title\nsentences…` joined by blank lines, the same way the TS bench does.

use std::time::Instant;

use noderag_text::tokens::{count_tokens, count_tokens_batch, warm_up};
use noderag_text::{chunk_text, norm_text};

/// bench/data/hotpotqa/corpus.json, from this crate's folder (crates/noderag_text).
const DEFAULT_CORPUS: &str = concat!(
  env!("CARGO_MANIFEST_DIR"),
  "/../../bench/data/hotpotqa/corpus.json"
);

fn main() {
  let mut args = std::env::args().skip(1);
  let path = args.next().unwrap_or_else(|| DEFAULT_CORPUS.to_owned());
  let chunk_size: usize = args.next().map_or(1048, |s| s.parse().expect("chunk_size"));
  let raw = std::fs::read_to_string(&path).expect("corpus file");
  let v: serde_json::Value = serde_json::from_str(&raw).expect("corpus JSON");
  let docs: Vec<String> = v
    .as_object()
    .expect("object of title → sentences")
    .iter()
    .map(|(title, s)| {
      let body: String = s
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
      format!("{title}\n{body}")
    })
    .collect();
  let corpus = docs.join("\n\n");

  let t = Instant::now();
  warm_up();
  println!(
    "tokenizer load            {:>9.1} ms",
    t.elapsed().as_secs_f64() * 1e3
  );

  let t = Instant::now();
  let n = count_tokens(&corpus);
  let d = t.elapsed().as_secs_f64();
  println!(
    "count, whole corpus       {:>9.1} ms  {n} tokens, {} chars, {:.2} M tokens/s",
    d * 1e3,
    corpus.chars().count(),
    n as f64 / d / 1e6
  );

  let t = Instant::now();
  let counts = count_tokens_batch(&docs);
  let d = t.elapsed().as_secs_f64();
  let total: u64 = counts.iter().map(|&c| c as u64).sum();
  println!(
    "count, batch of {} docs  {:>9.1} ms  {:.2} M tokens/s",
    docs.len(),
    d * 1e3,
    total as f64 / d / 1e6
  );

  let t = Instant::now();
  let cuts = noderag_text::cuts::cut_points(&corpus).len();
  println!(
    "cut_points                {:>9.1} ms  {cuts} cut points",
    t.elapsed().as_secs_f64() * 1e3
  );

  {
    use unicode_segmentation::UnicodeSegmentation;
    let t = Instant::now();
    let k = corpus.split_word_bound_indices().count();
    println!(
      "  of which UAX #29 words  {:>9.1} ms  {k} segments",
      t.elapsed().as_secs_f64() * 1e3
    );
  }

  for size in [chunk_size, 256] {
    let mut best = f64::MAX;
    let mut chunks = 0;
    for _ in 0..3 {
      let t = Instant::now();
      chunks = chunk_text(&corpus, size).unwrap().len();
      best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
      "chunk_text, chunk_size {size:>5} {:>8.1} ms  {chunks} chunks (best of 3)",
      best * 1e3
    );
  }

  let mut best = f64::MAX;
  for _ in 0..3 {
    let t = Instant::now();
    for d in &docs {
      chunk_text(d, chunk_size).unwrap();
    }
    best = best.min(t.elapsed().as_secs_f64());
  }
  println!(
    "chunk_text per document   {:>9.1} ms  {:.0} µs/doc (best of 3)",
    best * 1e3,
    best * 1e6 / docs.len() as f64
  );

  let t = Instant::now();
  let mut total = 0usize;
  for d in &docs {
    total += norm_text(d).len();
  }
  println!(
    "norm_text, {} docs       {:>9.1} ms  ({total} bytes)",
    docs.len(),
    t.elapsed().as_secs_f64() * 1e3
  );
}
