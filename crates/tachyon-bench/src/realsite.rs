//! The real sites of the real-traffic suites, beside the seeds' files in
//! the run's document root: Debian's Python documentation (`/docs/`, from
//! the `python3-doc` package, its symlinks into /usr/share/javascript
//! copied as files) and a generated web app as a bundler builds one
//! (`/app/`: an index, fingerprinted script and style bundles, lazy chunks,
//! fonts, images, icons and a JSON folder). Each has a twin with
//! precompressed `.gz`, `.br` and `.zst` siblings (`/docs-pre/`,
//! `/app-pre/`): the best a peer that serves siblings can do.
//!
//! Owns: making the sites (deterministic, once per document root), their
//! file lists, and the resources of the page the page-load cells fetch.
//! Does not own: how requests are sent (`traffic`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context};

use crate::site::{javascript, XorShift};

/// Where Debian installs the Python documentation.
pub const PYTHON_DOCS: &str = "/usr/share/doc/python3/html";

/// A real site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealSite {
    Docs,
    App,
}

impl RealSite {
    pub const ALL: [RealSite; 2] = [RealSite::Docs, RealSite::App];

    pub fn name(self) -> &'static str {
        match self {
            RealSite::Docs => "docs",
            RealSite::App => "app",
        }
    }

    /// The folder under the document root; the precompressed twin's is
    /// `NAME-pre`.
    pub fn dir(self, precompressed: bool) -> String {
        match precompressed {
            false => self.name().to_string(),
            true => format!("{}-pre", self.name()),
        }
    }

    /// The page the page-load cells fetch, with everything it loads.
    fn page(self) -> &'static str {
        match self {
            RealSite::Docs => "library/functions.html",
            RealSite::App => "index.html",
        }
    }
}

/// A site's URL paths: every file, and one page with its resources in
/// the order a browser finds them.
#[derive(Debug, Clone)]
pub struct SiteFiles {
    pub paths: Vec<String>,
    pub page: Vec<String>,
    /// The sum of the sizes of `paths`, and of `page`.
    pub paths_bytes: u64,
    pub page_bytes: u64,
}

/// Makes both sites and their twins under `www` unless already made;
/// an error once `stop` is set while their variants are compressed.
pub fn generate(www: &Path, stop: &AtomicBool) -> anyhow::Result<()> {
    let marker = www.join(".real-sites-made");
    if marker.is_file() {
        return Ok(());
    }
    let docs = www.join(RealSite::Docs.dir(false));
    copy_python_docs(Path::new(PYTHON_DOCS), &docs)?;
    let app = www.join(RealSite::App.dir(false));
    generate_app(&app)?;
    for site in RealSite::ALL {
        let plain = www.join(site.dir(false));
        let twin = www.join(site.dir(true));
        let _ = std::fs::remove_dir_all(&twin);
        copy_tree(&plain, &twin)?;
        precompress(&twin, stop)?;
    }
    std::fs::write(marker, "")?;
    Ok(())
}

/// The files of `site` under `www` (its twin's when `precompressed`, the
/// siblings left out: a browser asks for the original).
pub fn files(www: &Path, site: RealSite, precompressed: bool) -> anyhow::Result<SiteFiles> {
    let dir = site.dir(precompressed);
    let root = www.join(&dir);
    let mut paths = Vec::new();
    let mut paths_bytes = 0;
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry?;
        if !entry.file_type().is_file() || is_sibling(entry.path()) {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&root)?
            .to_string_lossy()
            .to_string();
        if rel.starts_with('.') {
            continue;
        }
        paths_bytes += entry.metadata()?.len();
        paths.push(format!("/{dir}/{rel}"));
    }
    let page = page_resources(&root, site.page())?
        .into_iter()
        .map(|rel| format!("/{dir}/{rel}"))
        .collect::<Vec<_>>();
    let page_bytes = page
        .iter()
        .map(|p| std::fs::metadata(www.join(&p[1..])).map_or(0, |m| m.len()))
        .sum();
    Ok(SiteFiles {
        paths,
        page,
        paths_bytes,
        page_bytes,
    })
}

fn is_sibling(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("gz" | "br" | "zst")
    ) && path.with_extension("").is_file()
}

/// Copies the documentation, following its symlinks (jQuery and
/// Underscore are links into /usr/share/javascript).
fn copy_python_docs(from: &Path, to: &Path) -> anyhow::Result<()> {
    if !from.join("index.html").is_file() {
        bail!(
            "{} has no index.html: install python3-doc (`tachyon-bench setup` does)",
            from.display()
        );
    }
    let _ = std::fs::remove_dir_all(to);
    copy_tree(from, to)
}

/// Copies a tree, symlinks followed, as regular files.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in walkdir::WalkDir::new(from).follow_links(true) {
        let entry = entry?;
        let target = to.join(entry.path().strip_prefix(from)?);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Whether a file is text worth compressing, by its extension.
fn compressible(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("html" | "css" | "js" | "json" | "svg" | "txt" | "xml" | "webmanifest" | "ico")
    )
}

/// Writes `.gz` (gzip -9), `.br` (brotli 11) and `.zst` (zstd 19) beside
/// every compressible file under `dir`, as a site owner's build step would,
/// on every core. Stops early, with an error, once `stop` is set (the
/// marker is then not written, so the next run starts again).
fn precompress(dir: &Path, stop: &AtomicBool) -> anyhow::Result<()> {
    let files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && compressible(e.path()))
        .map(|e| e.into_path())
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..cores)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    loop {
                        if stop.load(Ordering::Relaxed) {
                            bail!("interrupted while compressing the real sites");
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(path) = files.get(i) else {
                            return Ok(());
                        };
                        write_siblings(path)?;
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|_| bail!("a compressing thread panicked"))
        })
    })
}

fn write_siblings(path: &Path) -> anyhow::Result<()> {
    use std::io::Write;
    let data = std::fs::read(path)?;
    let sibling = |ext: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(".");
        name.push(ext);
        PathBuf::from(name)
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&data)?;
    std::fs::write(sibling("gz"), gz.finish()?)?;
    let mut br = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    brotli::BrotliCompress(&mut &data[..], &mut br, &params)?;
    std::fs::write(sibling("br"), br)?;
    std::fs::write(sibling("zst"), zstd::encode_all(&data[..], 19)?)?;
    Ok(())
}

/// The resources of the page at `rel` under `root`, the page first: its
/// stylesheets, scripts, icons and images, and what the stylesheets import
/// or point at, each once, in the order found.
fn page_resources(root: &Path, rel: &str) -> anyhow::Result<Vec<String>> {
    let mut found = vec![rel.to_string()];
    let mut i = 0;
    while i < found.len() {
        let current = found[i].clone();
        i += 1;
        let Ok(text) = std::fs::read_to_string(root.join(&current)) else {
            continue;
        };
        let refs = if current.ends_with(".css") {
            css_refs(&text)
        } else if current.ends_with(".html") && i == 1 {
            html_refs(&text)
        } else {
            Vec::new()
        };
        for r in refs {
            let Some(resolved) = resolve(&current, &r) else {
                continue;
            };
            if root.join(&resolved).is_file() && !found.contains(&resolved) {
                found.push(resolved);
            }
        }
    }
    Ok(found)
}

/// `href`s of stylesheets, icons and preloads, `src`s of scripts and
/// images.
fn html_refs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or("");
        let wanted = ["stylesheet", "icon", "preload"];
        let attr = if tag.starts_with("link ") && wanted.iter().any(|rel| tag.contains(rel)) {
            "href="
        } else if tag.starts_with("script ") || tag.starts_with("img ") {
            "src="
        } else {
            continue;
        };
        if let Some(value) = attribute(tag, attr) {
            out.push(value);
        }
    }
    out
}

fn attribute(tag: &str, attr: &str) -> Option<String> {
    let start = tag.find(attr)? + attr.len();
    let rest = &tag[start..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let value = &rest[1..];
    Some(value[..value.find(quote)?].to_string())
}

/// `url(...)` references of a stylesheet (`@import url(...)` among them).
fn css_refs(css: &str) -> Vec<String> {
    css.split("url(")
        .skip(1)
        .filter_map(|rest| {
            let inner = rest.split(')').next()?;
            Some(
                inner
                    .trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .to_string(),
            )
        })
        .collect()
}

/// A reference from the file at `from` resolved to a path under the root,
/// or None for another origin, a data URL or a fragment.
fn resolve(from: &str, reference: &str) -> Option<String> {
    let reference = reference.split(['?', '#']).next()?;
    if reference.is_empty() || reference.contains(':') {
        return None;
    }
    let mut parts: Vec<&str> = match reference.strip_prefix('/') {
        // Absolute: the app's paths start with its folder, which `files`
        // adds back.
        Some(abs) => {
            return Some(
                abs.split_once('/')
                    .map_or(abs, |(_, rest)| rest)
                    .to_string(),
            )
        }
        None => from.split('/').collect(),
    };
    parts.pop();
    for segment in reference.split('/') {
        match segment {
            "." | "" => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// One file of the app: its path under the app's folder and its bytes.
struct AppFile {
    path: String,
    bytes: Vec<u8>,
}

/// A web app as a bundler (Vite, webpack) builds one, deterministic: the
/// sizes are those of a median page of today's web (HTTP Archive 2024:
/// about 600 KB of script, 80 KB of style, 1 MB of images, 100 KB of
/// fonts, 70 requests), the text made to compress as real text does.
fn generate_app(dir: &Path) -> anyhow::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    // One sequence for the whole app, drawn in this order: a file's bytes
    // depend on every file made before it.
    let mut rng = XorShift(0x5DEE_CE66_D1CE_4E5B);
    let mut files: Vec<AppFile> = Vec::new();
    let code = bundle(&mut rng, &mut files);
    let media = media(&mut rng, &mut files);
    data(&mut rng, &mut files);
    let page = AppPage {
        css: &code.css,
        scripts: &[
            &code.vendor_js,
            &code.index_js,
            &code.chunks[0],
            &code.chunks[1],
        ],
        fonts: &media.fonts,
        images: &media.images[..9],
        icons: &media.icons[..10],
    };
    files_push(&mut files, "index.html", page.html(&mut rng));
    for file in files {
        let path = dir.join(&file.path);
        std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
        std::fs::write(path, file.bytes)?;
    }
    Ok(())
}

/// The bundler's output: its scripts and style sheet, by path.
struct Bundle {
    index_js: String,
    vendor_js: String,
    chunks: Vec<String>,
    css: String,
}

/// Hashed script bundles (an entry, a vendor bundle, twelve lazy chunks)
/// and one style sheet.
fn bundle(rng: &mut XorShift, files: &mut Vec<AppFile>) -> Bundle {
    let mut js = |rng: &mut XorShift, name: &str, len: usize| {
        let path = format!("assets/{name}-{}.js", content_hash(rng));
        files_push(files, &path, javascript(rng, len));
        path
    };
    let index_js = js(rng, "index", 330_000);
    let vendor_js = js(rng, "vendor", 140_000);
    let chunks = (0..12)
        .map(|i| {
            let len = 8_000 + (rng.next() % 52_000) as usize;
            js(rng, &format!("chunk-{i}"), len)
        })
        .collect();
    let css = format!("assets/index-{}.css", content_hash(rng));
    files_push(files, &css, stylesheet(rng, 80_000));
    Bundle {
        index_js,
        vendor_js,
        chunks,
        css,
    }
}

/// The app's fonts, images and icons, by path.
struct Media {
    fonts: Vec<String>,
    images: Vec<String>,
    icons: Vec<String>,
}

/// Four font weights, a hero image and twenty photos, thirty icons, the
/// favicon and the logo.
fn media(rng: &mut XorShift, files: &mut Vec<AppFile>) -> Media {
    let fonts = [400, 500, 600, 700]
        .iter()
        .map(|weight| {
            let path = format!("assets/fonts/inter-{weight}-{}.woff2", content_hash(rng));
            let len = 24_000 + (rng.next() % 24_000) as usize;
            files_push(files, &path, binary(rng, b"wOF2", len));
            path
        })
        .collect();
    let hero = format!("images/hero-{}.webp", content_hash(rng));
    files_push(files, &hero, binary(rng, b"RIFF", 180_000));
    let mut images = vec![hero];
    for i in 0..20 {
        let path = format!("images/photo-{i}-{}.jpg", content_hash(rng));
        let len = 40_000 + (rng.next() % 160_000) as usize;
        files_push(files, &path, binary(rng, &[0xff, 0xd8, 0xff], len));
        images.push(path);
    }
    let icons = (0..30)
        .map(|i| {
            let path = format!("icons/icon-{i}.svg");
            files_push(files, &path, svg(rng));
            path
        })
        .collect();
    files_push(files, "favicon.ico", binary(rng, &[0, 0, 1, 0], 15_086));
    files_push(files, "logo.svg", svg(rng));
    Media {
        fonts,
        images,
        icons,
    }
}

/// The JSON API folder, the web manifest and robots.txt.
fn data(rng: &mut XorShift, files: &mut Vec<AppFile>) {
    for i in 0..50 {
        let len = 1_000 + (rng.next() % 19_000) as usize;
        files_push(files, &format!("api/products/{i}.json"), json(rng, len));
    }
    files_push(files, "api/index.json", json(rng, 60_000));
    files_push(
        files,
        "manifest.webmanifest",
        br#"{"name":"Shop","short_name":"Shop","start_url":"/app/","display":"standalone","icons":[{"src":"/app/logo.svg","sizes":"any"}]}"#.to_vec(),
    );
    files_push(files, "robots.txt", b"User-agent: *\nAllow: /\n".to_vec());
}

/// A bundler's content hash in a file name: eight hex digits.
fn content_hash(rng: &mut XorShift) -> String {
    format!("{:08x}", rng.next() as u32)
}

fn files_push(files: &mut Vec<AppFile>, path: &str, bytes: Vec<u8>) {
    files.push(AppFile {
        path: path.to_string(),
        bytes,
    });
}

/// What the app's index page loads.
struct AppPage<'a> {
    css: &'a str,
    scripts: &'a [&'a str],
    fonts: &'a [String],
    images: &'a [String],
    icons: &'a [String],
}

impl AppPage<'_> {
    /// The prerendered index: head links, then a product grid, about 30 KB.
    fn html(&self, rng: &mut XorShift) -> Vec<u8> {
        let mut h = String::from("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Shop</title>\n<link rel=\"icon\" href=\"/app/favicon.ico\">\n<link rel=\"manifest\" href=\"/app/manifest.webmanifest\">\n");
        for font in self.fonts {
            h += &format!("<link rel=\"preload\" as=\"font\" type=\"font/woff2\" crossorigin href=\"/app/{font}\">\n");
        }
        h += &format!("<link rel=\"stylesheet\" href=\"/app/{}\">\n", self.css);
        for script in self.scripts {
            h += &format!("<script type=\"module\" crossorigin src=\"/app/{script}\"></script>\n");
        }
        h += "</head>\n<body>\n<header class=\"site-header\"><img src=\"/app/logo.svg\" alt=\"Shop\" width=\"120\" height=\"32\"><nav>";
        for icon in self.icons {
            h += &format!("<a class=\"nav-link\" href=\"#\"><img src=\"/app/{icon}\" alt=\"\" width=\"20\" height=\"20\"></a>");
        }
        h += "</nav></header>\n<main id=\"app\">\n";
        for (i, image) in self.images.iter().enumerate() {
            let words = prose(rng, 60);
            h += &format!("<article class=\"product-card\" data-id=\"{i}\">\n  <img src=\"/app/{image}\" alt=\"{}\" loading=\"lazy\" width=\"640\" height=\"480\">\n  <h2 class=\"product-title\">{}</h2>\n  <p class=\"product-description\">{words}</p>\n  <button class=\"btn btn-primary\" data-action=\"add-to-cart\">Add to cart</button>\n</article>\n", prose(rng, 3), prose(rng, 4));
        }
        while h.len() < 30_000 {
            h += &format!(
                "<section class=\"review\"><h3>{}</h3><p>{}</p></section>\n",
                prose(rng, 5),
                prose(rng, 80)
            );
        }
        h += "</main>\n</body>\n</html>\n";
        h.into_bytes()
    }
}

const WORDS: [&str; 32] = [
    "the", "fast", "server", "design", "comfort", "cotton", "shirt", "colour", "delivery",
    "return", "quality", "price", "customer", "fabric", "size", "order", "great", "light", "warm",
    "summer", "winter", "classic", "modern", "organic", "premium", "soft", "durable", "everyday",
    "fit", "blue", "green", "review",
];

fn prose(rng: &mut XorShift, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// A stylesheet of utility and component rules.
fn stylesheet(rng: &mut XorShift, len: usize) -> Vec<u8> {
    const PROPS: [&str; 12] = [
        "margin",
        "padding",
        "color",
        "background-color",
        "border-radius",
        "font-size",
        "line-height",
        "display",
        "gap",
        "width",
        "max-width",
        "box-shadow",
    ];
    let mut out = String::from(":root{--brand:#3b82f6;--text:#111827;--muted:#6b7280}\n");
    while out.len() < len {
        let a = WORDS[(rng.next() % 32) as usize];
        let b = WORDS[(rng.next() % 32) as usize];
        let n = rng.next() % 48;
        out += &format!(".{a}-{b}-{n},.{b}__{a}:hover{{");
        for _ in 0..(2 + rng.next() % 4) {
            let prop = PROPS[(rng.next() % 12) as usize];
            out += &format!("{prop}:{}px;", rng.next() % 64);
        }
        out += "}\n";
    }
    out.truncate(len);
    out.into_bytes()
}

/// A product listing as an API returns it.
fn json(rng: &mut XorShift, len: usize) -> Vec<u8> {
    let mut out = String::from("{\"items\":[");
    let mut id = 0;
    while out.len() < len {
        if id > 0 {
            out.push(',');
        }
        out += &format!(
            "{{\"id\":{},\"name\":\"{}\",\"price\":{}.{:02},\"currency\":\"EUR\",\"tags\":[\"{}\",\"{}\"],\"description\":\"{}\",\"stock\":{}}}",
            1000 + rng.next() % 9000,
            prose(rng, 3),
            rng.next() % 200,
            rng.next() % 100,
            WORDS[(rng.next() % 32) as usize],
            WORDS[(rng.next() % 32) as usize],
            prose(rng, 12),
            rng.next() % 500
        );
        id += 1;
    }
    out += "]}";
    out.into_bytes()
}

/// A small icon.
fn svg(rng: &mut XorShift) -> Vec<u8> {
    let mut out = String::from("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 24 24\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2\" stroke-linecap=\"round\" stroke-linejoin=\"round\">");
    for _ in 0..(4 + rng.next() % 12) {
        out += &format!(
            "<path d=\"M{} {}L{} {}C{} {} {} {} {} {}Z\"/>",
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24,
            rng.next() % 24
        );
    }
    out += "</svg>\n";
    out.into_bytes()
}

/// Already-compressed media (fonts, photos): random bytes after a magic.
fn binary(rng: &mut XorShift, magic: &[u8], len: usize) -> Vec<u8> {
    let mut out = magic.to_vec();
    out.extend(rng.bytes(len.saturating_sub(magic.len())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_like_a_browser() {
        assert_eq!(
            resolve("library/functions.html", "../_static/pygments.css").as_deref(),
            Some("_static/pygments.css")
        );
        assert_eq!(
            resolve("_static/pydoctheme.css", "default.css?2022").as_deref(),
            Some("_static/default.css")
        );
        assert_eq!(
            resolve("index.html", "/app/assets/a.js").as_deref(),
            Some("assets/a.js")
        );
        assert_eq!(resolve("index.html", "https://python.org/x.css"), None);
        assert_eq!(resolve("index.html", "../../x.css"), None);
    }

    #[test]
    fn the_app_page_loads_what_a_bundle_would() {
        let dir = tachyon_testkit::Scratch::new("app");
        generate_app(dir.path()).unwrap();
        let page = page_resources(dir.path(), "index.html").unwrap();
        assert_eq!(page[0], "index.html");
        let count = |ext: &str| page.iter().filter(|p| p.ends_with(ext)).count();
        assert_eq!(count(".js"), 4, "{page:?}");
        assert_eq!(count(".css"), 1);
        assert_eq!(count(".jpg") + count(".webp"), 9);
        assert!(count(".svg") >= 10);
        assert_eq!(count(".ico"), 1);
        assert_eq!(count(".woff2"), 4, "the preloaded fonts");
    }
}
