//! HAR files (HTTP Archive 1.2, what browsers' developer tools and proxies save) as a
//! replay source: each entry's `startedDateTime` (ISO 8601 with a fraction: when the request began), its
//! request's method, URL (the path and query are requested; the URL's host is not the
//! target), headers and `postData.text`.
//!
//! Owns the mapping of one document into entries, each parsed on its own so a bad
//! entry is counted, not fatal. Headers that belong to the connection or that rshperf
//! writes itself (`Host`, `User-Agent`, `Content-Length`, `Connection`, HTTP/2
//! pseudo-headers, …) are not replayed. A HAR is one document, so it is read whole
//! (serde_json). Pure; called by `replay::Parser`.

use serde::Deserialize;

use super::time;
use super::Entry;

/// The document's skeleton: entries are kept raw, to be parsed one by one.
#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HarEntry {
    started_date_time: String,
    request: Request,
    #[serde(default)]
    connection: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct PostData {
    #[serde(default)]
    text: Option<String>,
}

/// The client of an entry without a `connection` (all such entries are one client):
/// the empty id, which names no connection (browsers write a number).
pub(crate) const NO_CONNECTION: &str = "";

/// Request headers not replayed: the connection's, and those rshperf writes.
const SKIPPED: &[&str] = &[
    "host",
    "user-agent",
    "content-length",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "upgrade",
];

/// The request target of an absolute or relative URL: its path and query.
fn target(url: &str) -> Option<String> {
    let rest = match url.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && !scheme.contains('/') => rest,
        Some(_) => return None,
        None => return url.starts_with('/').then(|| url.to_string()),
    };
    let path = rest.find(['/', '?']).map_or("/", |i| &rest[i..]);
    let path = path.split('#').next().unwrap_or(path);
    Some(if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    })
}

/// One entry, or what is wrong with it.
fn entry(v: serde_json::Value) -> Result<Entry, String> {
    let e: HarEntry = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let at = time::iso8601(&e.started_date_time)
        .ok_or_else(|| format!("a bad startedDateTime {}", e.started_date_time))?;
    let r = e.request;
    if r.method.is_empty()
        || !r
            .method
            .bytes()
            .all(|b| b.is_ascii_alphabetic() || b == b'-')
    {
        return Err(format!("a bad method {:?}", r.method));
    }
    let uri = target(&r.url).ok_or_else(|| format!("a bad url {:?}", r.url))?;
    let headers = r
        .headers
        .into_iter()
        .filter(|h| {
            !h.name.starts_with(':') && !SKIPPED.iter().any(|s| h.name.eq_ignore_ascii_case(s))
        })
        .filter(|h| !h.name.contains([':', '\r', '\n']) && !h.value.contains(['\r', '\n']))
        .map(|h| (h.name, h.value))
        .collect();
    Ok(Entry {
        at,
        // `startedDateTime` is when the request began: nothing to subtract.
        request_time: None,
        client: e.connection.unwrap_or_else(|| NO_CONNECTION.to_string()),
        method: r.method,
        uri,
        headers,
        body: r
            .post_data
            .and_then(|p| p.text)
            .unwrap_or_default()
            .into_bytes(),
    })
}

/// The entries of a HAR document, each parsed or refused on its own; Err when the
/// document is not a HAR (no `log.entries`).
pub(crate) fn parse(doc: &str) -> Result<Vec<Result<Entry, String>>, String> {
    let har: Har = serde_json::from_str(doc).map_err(|e| format!("not a HAR file: {e}"))?;
    Ok(har.log.entries.into_iter().map(entry).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::replay::time::Stamp;

    /// Two entries as Chrome's developer tools save them (trimmed).
    const CHROME: &str = r#"{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},
      "pages":[],"entries":[
      {"startedDateTime":"2026-12-05T23:59:58.512Z","time":41.3,"connection":"1841",
       "request":{"method":"GET","url":"https://shop.example.com/api/cart?x=1#frag","httpVersion":"http/2.0",
         "headers":[{"name":":authority","value":"shop.example.com"},{"name":"accept","value":"application/json"},
                    {"name":"user-agent","value":"Mozilla/5.0"},{"name":"Cookie","value":"s=1"}],
         "queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
       "response":{"status":200},"cache":{},"timings":{"send":0,"wait":40,"receive":1}},
      {"startedDateTime":"2026-12-06T00:59:58.612+01:00","time":12,
       "request":{"method":"POST","url":"http://shop.example.com","httpVersion":"HTTP/1.1",
         "headers":[{"name":"Content-Type","value":"application/json"},{"name":"Content-Length","value":"9"}],
         "postData":{"mimeType":"application/json","text":"{\"a\":1}"}},
       "response":{"status":201}}]}}"#;

    #[test]
    fn a_browser_har_gives_method_uri_headers_and_body() {
        let entries: Vec<Entry> = parse(CHROME)
            .expect("a HAR")
            .into_iter()
            .collect::<Result<_, _>>()
            .expect("every entry");
        let [a, b] = &entries[..] else {
            panic!("two entries")
        };
        assert_eq!(
            a.at,
            Stamp {
                ns: 1_796_515_198_512_000_000,
                precise: true
            }
        );
        assert_eq!(
            (a.method.as_str(), a.uri.as_str()),
            ("GET", "/api/cart?x=1")
        );
        assert_eq!(a.client, "1841");
        assert_eq!(a.request_time, None);
        let names: Vec<&str> = a.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["accept", "Cookie"]);
        assert_eq!(b.at.ns - a.at.ns, 100_000_000);
        assert_eq!((b.method.as_str(), b.uri.as_str()), ("POST", "/"));
        assert_eq!(b.body, br#"{"a":1}"#);
        assert_eq!(
            b.headers,
            [("Content-Type".into(), "application/json".into())]
        );
        assert_eq!(b.client, NO_CONNECTION);
    }

    #[test]
    fn bad_entries_are_refused_one_by_one_and_bad_documents_whole() {
        let doc = r#"{"log":{"entries":[
          {"startedDateTime":"2026-12-05T23:59:58.512Z","request":{"method":"GET","url":"/ok"}},
          {"startedDateTime":"yesterday","request":{"method":"GET","url":"/a"}},
          {"startedDateTime":"2026-12-05T23:59:58.512Z","request":{"method":"G T","url":"/a"}},
          {"startedDateTime":"2026-12-05T23:59:58.512Z","request":{"method":"GET","url":"a.html"}},
          {"startedDateTime":"2026-12-05T23:59:58.512Z","request":{"method":"GET","url":"://x/"}},
          {"startedDateTime":"2026-12-05T23:59:58.512Z","request":{"url":"/a"}},
          {"startedDateTime":"2026-12-05T23:59:58.512Z"},
          {"request":{"method":"GET","url":"/a"}},
          7, null]}}"#;
        let got = parse(doc).expect("a HAR");
        assert_eq!(got.len(), 10);
        assert!(got[0].is_ok());
        let errors: Vec<String> = got
            .into_iter()
            .skip(1)
            .map(|e| e.expect_err("bad"))
            .collect();
        for (err, why) in errors.iter().zip([
            "startedDateTime",
            "method",
            "url",
            "url",
            "method",
            "request",
            "startedDateTime",
            "",
            "",
        ]) {
            assert!(err.contains(why), "{err}");
        }
        for bad in [
            "",
            "{}",
            "[]",
            r#"{"log":{}}"#,
            r#"{"log":{"entries":{}}}"#,
            "{\"log\":",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(target("https://h"), Some("/".into()));
        assert_eq!(target("https://h?q"), Some("/?q".into()));
        assert_eq!(target("h/x"), None);
    }
}
