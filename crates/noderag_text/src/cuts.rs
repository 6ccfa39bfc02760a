//! Cut points of the chunker (docs/method.md §3.2 step 1): positions just after a separator, each
//! with the strongest class that applies there.

use unicode_segmentation::UnicodeSegmentation;

/// Strength of a cut point, weakest first (so `max` picks the strongest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CutClass {
  /// W: any UAX #29 word boundary (also between two CJK ideographs).
  Word = 1,
  /// S: after `.` `!` `?` `;` followed by whitespace, or after `。` `！` `？` `；` `…`, with any
  /// closing quotes or brackets that follow the mark.
  Sentence = 2,
  /// L: after a single LF.
  Line = 3,
  /// P: after the last LF of a whitespace run holding at least two LF.
  Paragraph = 4,
}

/// One cut point: a byte offset into the text and its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
  pub pos: usize,
  pub class: CutClass,
}

/// Sentence marks that need whitespace after them (ASCII; `3.14`, `e.g.x` are not ends).
fn is_ascii_sentence_mark(c: char) -> bool {
  matches!(c, '.' | '!' | '?' | ';')
}

/// CJK sentence marks: a sentence ends right after them, no space needed.
fn is_cjk_sentence_mark(c: char) -> bool {
  matches!(c, '。' | '！' | '？' | '；' | '…')
}

/// Closing quotes and brackets that stay with the sentence they close.
fn is_closer(c: char) -> bool {
  matches!(
    c,
    '"'
      | '\''
      | ')'
      | ']'
      | '}'
      | '”'
      | '’'
      | '»'
      | '›'
      | '」'
      | '』'
      | '）'
      | '］'
      | '｝'
      | '】'
      | '》'
      | '〉'
      | '〕'
      | '〗'
      | '〙'
      | '〛'
      | '＂'
      | '＇'
  )
}

/// All cut points strictly inside `text` (0 < pos < len), ascending, one per position with the
/// strongest class that applies there. The end of the text is not listed: it is always the end
/// of the last chunk.
pub fn cut_points(text: &str) -> Vec<Cut> {
  let n = text.len();
  if n == 0 {
    return Vec::new();
  }
  // Class per byte position (0 = no cut); n + 1 bytes is cheap next to the text itself.
  let mut class = vec![0u8; n + 1];
  let mut mark = |pos: usize, c: CutClass| {
    if pos > 0 && pos < n && class[pos] < c as u8 {
      class[pos] = c as u8;
    }
  };

  for (pos, _) in text.split_word_bound_indices() {
    mark(pos, CutClass::Word);
  }

  // One pass for sentences, lines and paragraphs. A paragraph is a maximal whitespace run
  // holding at least two LF; its cut follows the run's last LF.
  let mut run_lfs = 0usize;
  let mut run_last_lf_end = 0usize;
  for (i, c) in text.char_indices() {
    if c.is_whitespace() {
      if c == '\n' {
        mark(i + 1, CutClass::Line);
        run_lfs += 1;
        run_last_lf_end = i + 1;
      }
      continue;
    }
    if run_lfs >= 2 {
      mark(run_last_lf_end, CutClass::Paragraph);
    }
    run_lfs = 0;
    if is_ascii_sentence_mark(c) || is_cjk_sentence_mark(c) {
      let mut after = i + c.len_utf8();
      let mut rest = text[after..].chars();
      let mut next = rest.next();
      while let Some(ch) = next.filter(|&ch| is_closer(ch)) {
        after += ch.len_utf8();
        next = rest.next();
      }
      if is_cjk_sentence_mark(c) || next.is_some_and(char::is_whitespace) {
        mark(after, CutClass::Sentence);
      }
    }
  }
  if run_lfs >= 2 {
    mark(run_last_lf_end, CutClass::Paragraph);
  }

  class
    .iter()
    .enumerate()
    .filter(|&(_, &c)| c != 0)
    .map(|(pos, &c)| Cut {
      pos,
      class: match c {
        1 => CutClass::Word,
        2 => CutClass::Sentence,
        3 => CutClass::Line,
        _ => CutClass::Paragraph,
      },
    })
    .collect()
}

#[cfg(test)]
mod tests {
  use super::*;
  use CutClass::*;

  fn show(text: &str) -> Vec<(String, CutClass)> {
    cut_points(text)
      .into_iter()
      .map(|c| (text[..c.pos].to_string(), c.class))
      .collect()
  }

  fn class_after(text: &str, prefix: &str) -> Option<CutClass> {
    cut_points(text)
      .into_iter()
      .find(|c| c.pos == prefix.len())
      .map(|c| c.class)
  }

  #[test]
  fn classes_of_an_english_text() {
    let t = "One two. Three!\nFour\n \nFive";
    assert_eq!(class_after(t, "One"), Some(Word));
    assert_eq!(class_after(t, "One "), Some(Word));
    assert_eq!(class_after(t, "One two."), Some(Sentence));
    assert_eq!(class_after(t, "One two. Three!"), Some(Sentence)); // LF is whitespace
    assert_eq!(class_after(t, "One two. Three!\n"), Some(Line));
    assert_eq!(class_after(t, "One two. Three!\nFour\n"), Some(Line));
    assert_eq!(class_after(t, "One two. Three!\nFour\n \n"), Some(Paragraph));
    // Never inside a word.
    assert_eq!(class_after(t, "On"), None);
    assert_eq!(class_after(t, "One two. Thr"), None);
    assert!(cut_points(t).iter().all(|c| c.pos > 0 && c.pos < t.len()));
  }

  #[test]
  fn sentence_marks_need_whitespace_and_keep_closers() {
    assert_eq!(class_after("Pi is 3.14 ok", "Pi is 3."), None);
    assert_eq!(class_after("e.g.x", "e.g."), None);
    let t = "He said \"Stop.\" Then (left.) Go";
    // A word boundary, but the closing quote stays with the sentence.
    assert_eq!(class_after(t, "He said \"Stop."), Some(Word));
    assert_eq!(class_after(t, "He said \"Stop.\""), Some(Sentence));
    assert_eq!(class_after(t, "He said \"Stop.\" Then (left.)"), Some(Sentence));
    assert_eq!(class_after("a; b", "a;"), Some(Sentence));
    // A mark at the very end is no inner cut point.
    assert!(show("Done.").iter().all(|(_, c)| *c != Sentence));
  }

  #[test]
  fn chinese_marks_and_ideograph_boundaries() {
    let t = "他说：「你好。」然后走了！再见…好";
    assert_eq!(class_after(t, "他说：「你好。」"), Some(Sentence));
    assert_eq!(class_after(t, "他说：「你好。"), Some(Word));
    assert_eq!(class_after(t, "他说：「你好。」然后走了！"), Some(Sentence));
    assert_eq!(class_after(t, "他说：「你好。」然后走了！再见…"), Some(Sentence));
    // UAX #29 puts a word boundary between two ideographs.
    assert_eq!(class_after(t, "他"), Some(Word));
    assert_eq!(class_after(t, "他说：「你"), Some(Word));
  }

  #[test]
  fn positions_are_char_boundaries_ascending_and_unique() {
    let t = "ＡＩ 🙂🙂 x\n\n\n居里夫人。 “Quote.” ok";
    let cuts = cut_points(t);
    assert!(cuts.windows(2).all(|w| w[0].pos < w[1].pos));
    assert!(cuts.iter().all(|c| t.is_char_boundary(c.pos)));
    assert_eq!(class_after(t, "ＡＩ 🙂🙂 x\n"), Some(Line));
    assert_eq!(class_after(t, "ＡＩ 🙂🙂 x\n\n"), Some(Line));
    assert_eq!(class_after(t, "ＡＩ 🙂🙂 x\n\n\n"), Some(Paragraph));
    assert_eq!(
      class_after(t, "ＡＩ 🙂🙂 x\n\n\n居里夫人。 “Quote.”"),
      Some(Sentence)
    );
  }
}
