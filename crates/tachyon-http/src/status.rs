//! The status codes tachyon sends, each with its code and reason phrase
//! from one table (RFC 9110 §15).

/// Defines [`Status`] from one table, so a code, its text and its reason
/// phrase cannot drift apart.
macro_rules! statuses {
    ($($variant:ident = $code:literal $reason:literal,)*) => {
        /// The status codes tachyon sends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Status {
            $($variant,)*
        }

        impl Status {
            /// The numeric code.
            pub fn code(self) -> u16 {
                match self {
                    $(Status::$variant => $code,)*
                }
            }

            /// The code as three digits.
            pub fn code_text(self) -> &'static str {
                match self {
                    $(Status::$variant => stringify!($code),)*
                }
            }

            /// The reason phrase (RFC 9110 §15).
            pub fn reason(self) -> &'static str {
                match self {
                    $(Status::$variant => $reason,)*
                }
            }
        }
    };
}

statuses! {
    Ok = 200 "OK",
    NoContent = 204 "No Content",
    PartialContent = 206 "Partial Content",
    MovedPermanently = 301 "Moved Permanently",
    Found = 302 "Found",
    NotModified = 304 "Not Modified",
    TemporaryRedirect = 307 "Temporary Redirect",
    PermanentRedirect = 308 "Permanent Redirect",
    BadRequest = 400 "Bad Request",
    NotFound = 404 "Not Found",
    MethodNotAllowed = 405 "Method Not Allowed",
    NotAcceptable = 406 "Not Acceptable",
    RequestTimeout = 408 "Request Timeout",
    PreconditionFailed = 412 "Precondition Failed",
    ContentTooLarge = 413 "Content Too Large",
    UriTooLong = 414 "URI Too Long",
    RangeNotSatisfiable = 416 "Range Not Satisfiable",
    HeadersTooLarge = 431 "Request Header Fields Too Large",
    ServiceUnavailable = 503 "Service Unavailable",
    VersionNotSupported = 505 "HTTP Version Not Supported",
}
