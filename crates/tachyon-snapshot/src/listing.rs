//! Directory listings, rendered once per snapshot for directories without
//! an index file (off by default, like nginx's `autoindex`).
//!
//! Owns the page a person sees (names, sizes, dates; sorted by name with
//! directories first, usable without JavaScript, re-sortable by a click
//! with it) and the JSON a program reads. Only names the snapshot serves are
//! listed: hidden and pruned entries never appear. Every name is escaped for
//! its context (HTML text, attribute, URL path, JSON string).

use std::fmt::Write;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use tachyon_http::conditional::format_date;

/// One visible child of a directory.
#[derive(Debug, Clone)]
pub struct Child {
    pub name: String,
    pub is_dir: bool,
    pub size: u64,
    pub modified: u64,
}

/// The HTML page for the directory at `site_path` (ends with `/`).
pub fn html(site_path: &str, children: &[Child]) -> String {
    let title = escape_html(site_path);
    let mut rows = String::new();
    if site_path != "/" {
        rows.push_str(
            "<tr><td><a href=\"../\">../</a></td><td data-v=\"-1\">–</td><td data-v=\"0\"></td></tr>\n",
        );
    }
    for c in ordered(children) {
        let slash = if c.is_dir { "/" } else { "" };
        let (size_text, size_value) = if c.is_dir {
            ("–".to_string(), -1i128)
        } else {
            (human_size(c.size), i128::from(c.size))
        };
        let _ = writeln!(
            rows,
            "<tr><td><a href=\"./{href}{slash}\">{name}{slash}</a></td><td data-v=\"{size_value}\">{size_text}</td><td data-v=\"{m}\">{date}</td></tr>",
            href = escape_html(&utf8_percent_encode(&c.name, SEGMENT).to_string()),
            name = escape_html(&c.name),
            m = c.modified,
            date = format_date(c.modified),
        );
    }
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Index of {title}</title>
<style>
body{{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1d2330;background:#fbfbfd}}
h1{{font-size:1.3rem;font-weight:600;margin:0 0 1rem;word-break:break-all}}
table{{width:100%;border-collapse:collapse;background:#fff;border:1px solid #e3e6ee;border-radius:8px;overflow:hidden}}
th,td{{padding:.45rem .9rem;text-align:left;border-bottom:1px solid #eef0f5}}
th{{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:#5b6478;background:#f4f6fa;cursor:pointer;user-select:none}}
td:nth-child(2),th:nth-child(2){{text-align:right;font-variant-numeric:tabular-nums}}
td:nth-child(3){{color:#5b6478;white-space:nowrap}}
tr:hover td{{background:#f7f9ff}}
a{{color:#2450c8;text-decoration:none}}a:hover{{text-decoration:underline}}
footer{{margin-top:1rem;color:#8a92a6;font-size:.8rem}}
@media (prefers-color-scheme:dark){{body{{background:#12151c;color:#e4e8f1}}table{{background:#1a1e27;border-color:#2a303c}}th{{background:#202532;color:#a4adc0}}td{{border-color:#262b36}}tr:hover td{{background:#222838}}a{{color:#8fb0ff}}}}
</style></head>
<body><h1>Index of {title}</h1>
<table><thead><tr><th data-k="0">Name</th><th data-k="1">Size</th><th data-k="2">Modified</th></tr></thead>
<tbody>
{rows}</tbody></table>
<footer>{count} entries · tachyon</footer>
<script>
document.querySelectorAll("th").forEach(function(th){{th.addEventListener("click",function(){{
var k=+th.dataset.k,b=th.closest("table").tBodies[0],up=b.rows[0]&&b.rows[0].cells[0].textContent==="../"?b.rows[0]:null;
var rs=[].slice.call(b.rows).filter(function(r){{return r!==up}}),d=th.dataset.d==="1"?-1:1;th.dataset.d=d===1?"1":"0";
rs.sort(function(x,y){{var a=x.cells[k],c=y.cells[k];var v=k?(+a.dataset.v)-(+c.dataset.v):a.textContent.localeCompare(c.textContent);return v*d}});
rs.forEach(function(r){{b.appendChild(r)}});}})}});
</script>
</body></html>
"#,
        count = children.len(),
    )
}

/// The JSON listing: an array of `{name, type, size, modified}` objects,
/// `modified` in seconds since the epoch.
pub fn json(children: &[Child]) -> String {
    let items: Vec<serde_json::Value> = ordered(children)
        .map(|c| {
            serde_json::json!({
                "name": c.name,
                "type": if c.is_dir { "directory" } else { "file" },
                "size": if c.is_dir { 0 } else { c.size },
                "modified": c.modified,
            })
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// Directories first, then by name.
fn ordered(children: &[Child]) -> impl Iterator<Item = &Child> {
    let mut v: Vec<&Child> = children.iter().collect();
    v.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    v.into_iter()
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// What stays as it is in a path segment: RFC 3986 §3.3 pchar (unreserved
/// characters, sub-delims, `:` and `@`); all else is `%XX`.
pub(crate) const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// What stays as it is in a whole path: a segment's characters and `/`.
pub(crate) const PATH: &AsciiSet = &SEGMENT.remove(b'/');

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_for_html_and_urls() {
        let children = vec![
            Child {
                name: "<b>&\"x\".txt".into(),
                is_dir: false,
                size: 2048,
                modified: 0,
            },
            Child {
                name: "sub dir".into(),
                is_dir: true,
                size: 0,
                modified: 0,
            },
        ];
        let page = html("/a/", &children);
        assert!(page.contains("&lt;b&gt;&amp;&quot;x&quot;.txt"));
        assert!(!page.contains("<b>&"));
        assert!(page.contains("href=\"./%3Cb%3E&amp;%22x%22.txt\""));
        assert!(page.contains("href=\"./sub%20dir/\""));
        assert!(page.contains("2.0 KiB"));
        let sub = page.find("sub dir/").unwrap();
        let file = page.find("&lt;b&gt;").unwrap();
        assert!(sub < file, "directories first");
        let parsed: serde_json::Value = serde_json::from_str(&json(&children)).unwrap();
        assert_eq!(parsed[0]["name"], "sub dir");
        assert_eq!(parsed[1]["size"], 2048);
    }
}
