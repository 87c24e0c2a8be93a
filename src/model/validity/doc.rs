//! The `validity` block of a run's JSON document (docs/json.md §2.9): its `reasons`
//! as JSON (the table of figures, `figure::optional`, makes the block) and the block
//! read back, and the union of the blocks of several runs (`merge`: a merged document
//! is invalid when any part is, each reason naming its part). Pure. Called by the
//! table of figures, `merge` and `compare`.

use serde_json::{json, Map, Value};

use super::{Cause, Reason, Validity};

/// A measurement as JSON: `null` when unknown or not finite.
fn number(v: Option<f64>) -> Value {
    v.filter(|x| x.is_finite()).map_or(Value::Null, Value::from)
}

/// `reasons`: `[{"reason", "part"?, "text", "measured": {…}}, …]`.
pub(crate) fn reasons_json(v: &Validity) -> Value {
    v.reasons
        .iter()
        .map(|r| {
            let mut o = Map::new();
            o.insert("reason".into(), json!(r.cause.key()));
            if let Some(p) = &r.part {
                o.insert("part".into(), json!(p));
            }
            o.insert("text".into(), json!(r.text));
            let measured: Map<String, Value> = r
                .measured
                .iter()
                .map(|(k, x)| (k.clone(), number(Some(*x))))
                .collect();
            o.insert("measured".into(), Value::Object(measured));
            Value::Object(o)
        })
        .collect()
}

/// The block of a document (`doc["validity"]`): None when the document has none (a
/// run of an earlier release, or a front end that does not judge); an error names
/// what is wrong with a block that is there.
pub(crate) fn from_document(doc: &Value) -> Result<Option<Validity>, String> {
    let Some(block) = doc.get("validity") else {
        return Ok(None);
    };
    let bad = |what: &str| format!("validity: {what}");
    let valid = block
        .get("valid")
        .and_then(Value::as_bool)
        .ok_or_else(|| bad("no valid (true or false)"))?;
    let list = block
        .get("reasons")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no reasons list"))?;
    let mut reasons = Vec::new();
    for r in list {
        let key = r.get("reason").and_then(Value::as_str).unwrap_or_default();
        let cause = Cause::from_key(key).ok_or_else(|| bad(&format!("unknown reason '{key}'")))?;
        let measured = r
            .get("measured")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(f64::NAN)))
                    .collect()
            })
            .unwrap_or_default();
        reasons.push(Reason {
            cause,
            part: r.get("part").and_then(Value::as_str).map(String::from),
            text: r
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            measured,
        });
    }
    if valid != reasons.is_empty() {
        return Err(bad(&format!(
            "valid is {valid} with {} reasons",
            reasons.len()
        )));
    }
    let measured = block
        .get("measured")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_f64())).collect())
        .unwrap_or_default();
    Ok(Some(Validity { reasons, measured }))
}

/// The judgement of the union of `parts` (each named, with its block; None: a part
/// without one): every part's reasons, each naming its part (`name: part` for a part
/// that was itself a merge), and each measurement the largest over the parts. None
/// when no part was judged.
pub(crate) fn merged(parts: &[(String, Option<Validity>)]) -> Option<Validity> {
    let judged: Vec<(&String, &Validity)> = parts
        .iter()
        .filter_map(|(name, v)| v.as_ref().map(|v| (name, v)))
        .collect();
    if judged.is_empty() {
        return None;
    }
    let mut out = Validity::default();
    for (name, v) in &judged {
        for r in &v.reasons {
            let mut r = r.clone();
            r.part = Some(match &r.part {
                Some(inner) => format!("{name}: {inner}"),
                None => name.to_string(),
            });
            out.reasons.push(r);
        }
        for (k, x) in &v.measured {
            match out.measured.iter_mut().find(|(n, _)| n == k) {
                Some((_, have)) => {
                    *have = match (*have, *x) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    }
                }
                None => out.measured.push((k.clone(), *x)),
            }
        }
    }
    // In cause order, each cause's reasons in the parts' order.
    out.reasons
        .sort_by_key(|r| Cause::ALL.iter().position(|c| *c == r.cause));
    Some(out)
}
