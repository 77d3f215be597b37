//! Site rules from the configuration: headers per glob and redirects.
//!
//! Owns checking each rule once, when it is built, so that what reaches the
//! loader can only produce valid header fields (parse, don't validate): a rule
//! with a bad glob, a header name that is not a token or a value with a line
//! break is an error that names it, never a broken response.

use tachyon_http::response::{Field, Name};
use tachyon_http::Status;

/// Why a rule was refused.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("glob {glob:?}: {reason}")]
    Glob { glob: String, reason: String },
    #[error("header name {0:?} is not a valid field name")]
    Name(String),
    #[error("header {name}: value {value:?} has a control character")]
    Value { name: String, value: String },
    #[error("header {0} is set by the server and cannot be configured")]
    Reserved(String),
    #[error("redirect from {0:?}: must be a path starting with /")]
    From(String),
    #[error("redirect to {0:?}: must be a path or URL without spaces or control characters")]
    To(String),
    #[error("redirect status {0}: must be 301, 302, 307 or 308")]
    Status(u16),
    #[error("dictionary match {0:?}: must be a path pattern starting with / without quotes, backslashes or spaces")]
    DictionaryMatch(String),
}

/// What a header rule says about compression dictionaries (RFC 9842) for
/// the files it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DictionaryRule {
    /// Never offer these files as dictionaries, nor send them as deltas.
    Off,
    /// Offer them under this `match` pattern (a URLPattern path, `*` for
    /// any characters), whatever their kind.
    Match(String),
}

/// Headers added to every file whose site path matches `glob`. Later rules
/// override earlier ones for `Cache-Control`; other headers accumulate.
#[derive(Debug, Clone)]
pub struct HeaderRule {
    glob: String,
    matcher: globset::GlobMatcher,
    cache_control: Option<String>,
    /// Configured fields, checked when the rule was built.
    fields: Vec<Field>,
    dictionary: Option<DictionaryRule>,
}

/// Headers whose value the server computes; configuring them would produce
/// a second, conflicting line.
const RESERVED: &[&str] = &[
    "content-length",
    "content-type",
    "content-encoding",
    "content-range",
    "transfer-encoding",
    "connection",
    "date",
    "etag",
    "last-modified",
    "accept-ranges",
    "vary",
    "server",
    "cache-control",
];

impl HeaderRule {
    /// A rule for site paths matching `glob` (`*.js`, `assets/**`; matched
    /// against the path without its leading `/`, `*` crosses directories).
    pub fn new(
        glob: &str,
        cache_control: Option<&str>,
        headers: &[(String, String)],
    ) -> Result<HeaderRule, RuleError> {
        let matcher = globset::Glob::new(glob.trim_start_matches('/'))
            .map_err(|e| RuleError::Glob {
                glob: glob.to_string(),
                reason: e.kind().to_string(),
            })?
            .compile_matcher();
        if let Some(value) = cache_control {
            field(Name::CacheControl, value)?;
        }
        let mut fields = Vec::new();
        for (name, value) in headers {
            let Some(checked) = Name::custom(name) else {
                return Err(RuleError::Name(name.clone()));
            };
            if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(RuleError::Reserved(name.clone()));
            }
            fields.push(field(checked, value)?);
        }
        Ok(HeaderRule {
            glob: glob.to_string(),
            matcher,
            cache_control: cache_control.map(|v| v.trim().to_string()),
            fields,
            dictionary: None,
        })
    }

    /// The same rule, also deciding dictionaries for its files.
    pub fn with_dictionary(mut self, rule: DictionaryRule) -> Result<HeaderRule, RuleError> {
        if let DictionaryRule::Match(pattern) = &rule {
            let bad = |b: u8| b <= b' ' || b == 0x7f || b == b'"' || b == b'\\';
            if !pattern.starts_with('/') || pattern.bytes().any(bad) {
                return Err(RuleError::DictionaryMatch(pattern.clone()));
            }
        }
        self.dictionary = Some(rule);
        Ok(self)
    }

    pub(crate) fn dictionary(&self) -> Option<&DictionaryRule> {
        self.dictionary.as_ref()
    }

    /// The glob as configured.
    pub fn glob(&self) -> &str {
        &self.glob
    }

    pub(crate) fn matches(&self, site_path: &str) -> bool {
        self.matcher.is_match(site_path.trim_start_matches('/'))
    }

    pub(crate) fn cache_control(&self) -> Option<&str> {
        self.cache_control.as_deref()
    }

    pub(crate) fn fields(&self) -> &[Field] {
        &self.fields
    }
}

fn field(name: Name, value: &str) -> Result<Field, RuleError> {
    Field::new(name.clone(), value).ok_or_else(|| RuleError::Value {
        name: name.as_str().to_string(),
        value: value.to_string(),
    })
}

/// A redirect from one site path to a path or URL.
#[derive(Debug, Clone)]
pub struct RedirectRule {
    pub(crate) from: Vec<u8>,
    pub(crate) to: Vec<u8>,
    pub(crate) status: Status,
}

impl RedirectRule {
    pub fn new(from: &str, to: &str, status: u16) -> Result<RedirectRule, RuleError> {
        if !from.starts_with('/') || from.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(RuleError::From(from.to_string()));
        }
        if to.is_empty() || to.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(RuleError::To(to.to_string()));
        }
        let status = match status {
            301 => Status::MovedPermanently,
            302 => Status::Found,
            307 => Status::TemporaryRedirect,
            308 => Status::PermanentRedirect,
            other => return Err(RuleError::Status(other)),
        };
        Ok(RedirectRule {
            from: from.as_bytes().to_vec(),
            to: to.as_bytes().to_vec(),
            status,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_site_paths_across_directories() {
        let rule = HeaderRule::new("*.js", Some("max-age=60"), &[]).unwrap();
        assert!(rule.matches("/app.js") && rule.matches("/assets/deep/app.js"));
        assert!(!rule.matches("/app.json"));
        let dir = HeaderRule::new("/fonts/**", None, &[]).unwrap();
        assert!(dir.matches("/fonts/a/b.woff2") && !dir.matches("/app.js"));
    }

    #[test]
    fn bad_rules_are_named() {
        let bad = |glob: &str, headers: &[(&str, &str)]| {
            let headers: Vec<(String, String)> = headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            HeaderRule::new(glob, None, &headers)
                .unwrap_err()
                .to_string()
        };
        assert!(bad("a[", &[]).contains("a["));
        assert!(bad("*", &[("X Bad", "1")]).contains("X Bad"));
        assert!(bad("*", &[("X-Ok", "a\r\nSet-Cookie: x")]).contains("control character"));
        assert!(bad("*", &[("Content-Length", "1")]).contains("set by the server"));
        assert!(RedirectRule::new("old", "/new", 301).is_err());
        assert!(RedirectRule::new("/old", "/new page", 301).is_err());
        assert!(RedirectRule::new("/old", "/new", 200).is_err());
        assert!(RedirectRule::new("/old", "https://example.com/new", 308).is_ok());
    }
}
