//! The footprint cells: a fresh server on the small site, `conns` idle
//! keep-alive connections held open, and its resident memory with and
//! without them (Boa's footprint claim, seed 002). In a TLS run the
//! connections are TLS sessions (rustls, certificate not checked: the run
//! made it), so the figure is memory per idle TLS connection.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};

use crate::peers::{Env, Running};
use crate::proc;
use crate::results::Row;

/// Measures `server`'s peer on its own fresh instance serving the small
/// site, into `row`.
pub fn measure(server: &Running, env: &Env, conns: u32, row: &mut Row) {
    // Its own scratch folder: this instance runs beside the main one,
    // and Apache refuses to start over a live pid file.
    let run_dir = env.run_dir.join("small");
    let small = Env {
        root: env.root.with_file_name("www-small"),
        run_dir: run_dir.clone(),
        ..env.clone()
    };
    if let Err(e) = crate::runner::scratch_dir(&run_dir) {
        row.ok = false;
        row.problems
            .push(format!("creating {}: {e}", run_dir.display()));
        return;
    }
    match Running::start(server.peer, &small) {
        Ok(fresh) => hold(&fresh, conns, row),
        Err(e) => {
            row.ok = false;
            row.problems
                .push(format!("starting on the small site: {e:#}"));
        }
    }
}

/// Opens `conns` keep-alive connections, one request each, holds them, and
/// reads the server's resident memory with and without them.
fn hold(server: &Running, conns: u32, row: &mut Row) {
    let kind = if server.tls { "TLS" } else { "keep-alive" };
    row.client_command =
        format!("(built in) {conns} {kind} connections, one GET / each, held open");
    let rest = proc::rss_bytes(server.pid());
    let mut held: Vec<Box<dyn Send>> = Vec::with_capacity(conns as usize);
    let mut failures = 0u64;
    let tls = server.tls.then(client_config);
    for _ in 0..conns {
        let attempt = (|| -> std::io::Result<Box<dyn Send>> {
            let stream = TcpStream::connect_timeout(&server.addr(), Duration::from_secs(2))?;
            stream.set_read_timeout(Some(Duration::from_secs(5)))?;
            Ok(match &tls {
                None => Box::new(one_request(stream)?),
                Some(config) => {
                    let name = ServerName::try_from("127.0.0.1").map_err(std::io::Error::other)?;
                    let session = ClientConnection::new(Arc::clone(config), name)
                        .map_err(std::io::Error::other)?;
                    Box::new(one_request(StreamOwned::new(session, stream))?)
                }
            })
        })();
        match attempt {
            Ok(stream) => held.push(stream),
            Err(_) => failures += 1,
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let loaded = proc::rss_bytes(server.pid());
    row.rss_rest_bytes = Some(rest);
    row.rss_loaded_bytes = Some(loaded);
    row.idle_conns_held = Some(held.len() as u64);
    row.client.requests = held.len() as u64;
    row.client.socket_errors = failures;
    row.ok = failures == 0;
    if failures > 0 {
        row.problems.push(format!(
            "{failures} of {conns} connections failed or were dropped"
        ));
    }
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
}

/// Sends one GET and reads the start of a 200.
fn one_request<S: Read + Write>(mut stream: S) -> std::io::Result<S> {
    stream.write_all(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut buf = [0u8; 1024];
    let n = stream.read(&mut buf)?;
    if n < 12 || &buf[9..12] != b"200" {
        return Err(std::io::Error::other("no 200"));
    }
    Ok(stream)
}

/// A TLS client that takes the run's self-signed certificate (signatures
/// are still checked; only the chain of trust is skipped).
fn client_config() -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(RunCertificate(provider)))
        .with_no_client_auth();
    Arc::new(config)
}

#[derive(Debug)]
struct RunCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for RunCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
