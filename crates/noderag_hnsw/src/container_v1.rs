//! Reading format 1 of `HNSW.bin` (written by noderag up to the hnsw_rs era): after the
//! header, hnsw_rs 0.3.5's own two dumps, native-endian (docs/method.md §5).
//!
//! ```text
//! graph dump   description block, then per layer the points with their neighbour lists
//!              (each neighbour as (label, layer, rank, distance)), then the entry point
//! data dump    magic, dimension, then per point: magic, label, byte length, the values
//! ```
//!
//! hnsw_rs is no longer a dependency: these dumps are parsed here, every read bounds-checked,
//! into the same lists hnsw_rs's loader made, so old files answer searches exactly as before
//! and can be extended by the new construction (saved again, they are format 2).

use std::io::Read;

use crate::index::IndexParams;
use crate::view::GraphParts;

/// The type name of the distance hnsw_rs was given, as its dump records it.
const V1_DISTANCE: &str = "noderag_hnsw::distance::SpaceDistance";

/// hnsw_rs's dump magics and its layer count (`hnswio.rs`, private there).
const DESCR_MAGIC_2: u32 = 0x002a_677f;
const DESCR_MAGIC_3: u32 = 0x002a_6771;
const DESCR_MAGIC_4: u32 = 0x002a_6779;
pub(crate) const HNSW_RS_DATA_MAGIC: u32 = 0xa67f_0000;
const HNSW_RS_POINT_MAGIC: u32 = 0x000a_678f;
const HNSW_RS_LAYER_MAGIC: u32 = 0x000a_676f;
const HNSW_RS_LAYERS: usize = 16;

/// Little cursor over the verified graph dump; every read is bounds-checked.
struct Cursor<'a> {
  bytes: &'a [u8],
  at: usize,
}

impl Cursor<'_> {
  fn take<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
    let end = self.at.checked_add(N).filter(|&e| e <= self.bytes.len());
    let end = end.ok_or_else(|| format!("graph dump ends early (at byte {})", self.at))?;
    let out: [u8; N] = self.bytes[self.at..end].try_into().expect("N bytes");
    self.at = end;
    Ok(out)
  }
  fn u8(&mut self) -> std::result::Result<u8, String> {
    Ok(self.take::<1>()?[0])
  }
  fn u32(&mut self) -> std::result::Result<u32, String> {
    Ok(u32::from_ne_bytes(self.take()?))
  }
  fn i32(&mut self) -> std::result::Result<i32, String> {
    Ok(i32::from_ne_bytes(self.take()?))
  }
  fn f32(&mut self) -> std::result::Result<f32, String> {
    Ok(f32::from_ne_bytes(self.take()?))
  }
  fn usize(&mut self) -> std::result::Result<usize, String> {
    Ok(usize::from_ne_bytes(self.take()?))
  }
}

/// One point of the graph dump: its label and, per layer, (neighbour position, distance).
struct DumpPoint {
  label: usize,
  level: u8,
  hood: Vec<Vec<((u8, i32), f32)>>,
}

/// Parses hnsw_rs's graph dump (full mode, as `file_dump` writes it) into the lists of a
/// [`GraphParts`]. Neighbours are resolved through their (layer, rank) position and sorted
/// by distance, exactly as hnsw_rs's own loader does, so searches see the same graph.
pub(crate) fn parse_graph(
  bytes: &[u8],
  params: &IndexParams,
  count: usize,
) -> std::result::Result<GraphParts, String> {
  let mut c = Cursor { bytes, at: 0 };
  // hnsw_rs's description block (`hnswio::Description`), field by field.
  let version = match c.u32()? {
    DESCR_MAGIC_2 => 2,
    DESCR_MAGIC_3 => 3,
    DESCR_MAGIC_4 => 4,
    other => return Err(format!("description starts with magic {other:#x}")),
  };
  let mode = c.u8()?;
  let max_nb_connection = c.u8()? as usize;
  if version == 4 {
    c.take::<8>()?; // level scale
  }
  let nb_layer = c.u8()? as usize;
  let ef = c.usize()?;
  let nb_point = c.usize()?;
  let dimension = c.usize()?;
  let mut names = Vec::with_capacity(2);
  for _ in 0..2 {
    let len = c.usize()?;
    if len > 256 {
      return Err("a type name in the description is too long".into());
    }
    let end = c.at.checked_add(len).filter(|&e| e <= bytes.len());
    let end = end.ok_or("graph dump ends inside the description")?;
    names.push(String::from_utf8_lossy(&bytes[c.at..end]).into_owned());
    c.at = end;
  }
  if mode != 1 {
    return Err(format!("dump mode {mode} is not the full mode (1)"));
  }
  if dimension != params.dim
    || nb_point != count
    || max_nb_connection != params.m
    || ef != params.ef_construction
  {
    return Err(format!(
      "description (dim {dimension}, {nb_point} points, m {max_nb_connection}, ef {ef}) disagrees with the header (dim {}, {count} points, m {}, ef {})",
      params.dim, params.m, params.ef_construction
    ));
  }
  if names[0] != V1_DISTANCE || names[1] != "f32" {
    return Err(format!(
      "graph dump is for distance {:?} over {:?}",
      names[0], names[1]
    ));
  }
  let layers = c.u8()? as usize;
  if layers > HNSW_RS_LAYERS || nb_layer > HNSW_RS_LAYERS {
    return Err(format!("{layers} layers (at most {HNSW_RS_LAYERS})"));
  }
  // by_position[layer][rank] = index into `points`.
  let mut by_position: Vec<Vec<usize>> = Vec::with_capacity(layers);
  let mut points: Vec<DumpPoint> = Vec::with_capacity(count);
  for layer in 0..layers {
    if c.u32()? != HNSW_RS_LAYER_MAGIC {
      return Err(format!("bad magic at the start of layer {layer}"));
    }
    let in_layer = c.usize()?;
    if in_layer > count - points.len().min(count) {
      return Err(format!("layer {layer} announces {in_layer} points"));
    }
    let mut ranks = Vec::with_capacity(in_layer);
    for rank in 0..in_layer {
      if c.u32()? != HNSW_RS_POINT_MAGIC {
        return Err(format!("bad magic at point {rank} of layer {layer}"));
      }
      let label = c.usize()?;
      let level = c.u8()?;
      let at_rank = c.i32()?;
      if level as usize != layer || at_rank as i64 != rank as i64 {
        return Err(format!(
          "point {rank} of layer {layer} says it is at ({level}, {at_rank})"
        ));
      }
      let mut hood = Vec::with_capacity(nb_layer);
      for _ in 0..nb_layer {
        let n = c.usize()?;
        if n > 2 * 256 + 1 {
          return Err(format!("a point has {n} neighbours on one layer"));
        }
        let mut list = Vec::with_capacity(n);
        for _ in 0..n {
          c.usize()?; // label, resolved through the position below
          let nl = c.u8()?;
          let nr = c.i32()?;
          let dist = c.f32()?;
          if dist.is_nan() {
            return Err("a neighbour distance is NaN".into());
          }
          list.push(((nl, nr), dist));
        }
        hood.push(list);
      }
      ranks.push(points.len());
      points.push(DumpPoint { label, level, hood });
    }
    by_position.push(ranks);
  }
  let ep_label = c.usize()?;
  let ep_layer = c.u8()?;
  let ep_rank = c.i32()?;
  if c.at != bytes.len() {
    return Err(format!("{} unexpected bytes after the graph", bytes.len() - c.at));
  }
  if points.len() != count {
    return Err(format!(
      "graph dump holds {} points, expected {count}",
      points.len()
    ));
  }
  let resolve = |(l, r): (u8, i32)| -> std::result::Result<usize, String> {
    usize::try_from(r)
      .ok()
      .and_then(|r| by_position.get(l as usize)?.get(r).copied())
      .map(|i| points[i].label)
      .ok_or_else(|| format!("a neighbour at ({l}, {r}) does not exist"))
  };
  let mut seen = vec![false; count];
  let mut l0 = vec![Vec::new(); count];
  let mut upper = std::collections::HashMap::new();
  for p in &points {
    if p.label >= count || std::mem::replace(&mut seen[p.label], true) {
      return Err(format!("labels are not exactly 0..{count} (label {})", p.label));
    }
    let mut lists = Vec::with_capacity(p.level as usize + 1);
    for l in 0..=p.level as usize {
      let dumped = p.hood.get(l).map(Vec::as_slice).unwrap_or_default();
      // hnsw_rs's loader sorts each list by distance with `sort_unstable` over 8-byte
      // elements (`Arc`s); sorting 8-byte (distance, index) pairs with the same comparison
      // takes the same path through the sort, so ties end up in the same order.
      let mut order: Vec<(f32, u32)> = dumped.iter().enumerate().map(|(i, n)| (n.1, i as u32)).collect();
      order.sort_unstable_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
      let list = order
        .into_iter()
        .map(|(_, i)| resolve(dumped[i as usize].0).map(|x| x as u32))
        .collect::<std::result::Result<Vec<u32>, String>>()?;
      lists.push(list);
    }
    l0[p.label] = lists.remove(0);
    if p.level > 0 {
      upper.insert(p.label as u32, lists);
    }
  }
  let entry = match usize::try_from(ep_rank)
    .ok()
    .and_then(|r| by_position.get(ep_layer as usize)?.get(r))
  {
    Some(&i) if points[i].label == ep_label => Some((ep_label as u32, ep_layer)),
    _ if count == 0 => None,
    _ => {
      return Err(format!(
        "entry point {ep_label} at ({ep_layer}, {ep_rank}) does not exist"
      ))
    }
  };
  Ok(GraphParts { l0, upper, entry })
}

/// Reads the data dump (one record per point: magic, label, byte length, the values) into
/// a flat buffer, row = label. Stops at the first malformed record.
pub(crate) fn parse_data(
  data: &mut impl Read,
  dim: usize,
  count: usize,
) -> std::result::Result<Vec<f32>, String> {
  let io = |e: std::io::Error| format!("data dump ends early ({e})");
  let mut head = [0u8; 4 + std::mem::size_of::<usize>()];
  data.read_exact(&mut head).map_err(io)?;
  let mut flat = vec![0f32; count * dim];
  let mut filled = vec![false; count];
  let mut record = [0u8; 20];
  let mut row = vec![0u8; dim * 4];
  for _ in 0..count {
    data.read_exact(&mut record).map_err(io)?;
    let magic = u32::from_ne_bytes(record[..4].try_into().expect("4 bytes"));
    let label = u64::from_ne_bytes(record[4..12].try_into().expect("8 bytes"));
    let len = u64::from_ne_bytes(record[12..20].try_into().expect("8 bytes"));
    if magic != HNSW_RS_DATA_MAGIC || len != (dim * 4) as u64 {
      return Err(format!("data record has magic {magic:#x} and {len} bytes"));
    }
    let label = usize::try_from(label).ok().filter(|&l| l < count);
    let label = label.ok_or("a data record has a label out of range")?;
    if std::mem::replace(&mut filled[label], true) {
      return Err(format!("label {label} is stored twice"));
    }
    data.read_exact(&mut row).map_err(io)?;
    for (v, b) in flat[label * dim..(label + 1) * dim]
      .iter_mut()
      .zip(row.chunks_exact(4))
    {
      *v = f32::from_ne_bytes(b.try_into().expect("4 bytes"));
    }
  }
  Ok(flat)
}
