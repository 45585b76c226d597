//! Bodies compressed once and kept ([`Encoded`]): what a read use case
//! answers, so a warm read compresses nothing. Each coding (Brotli, gzip)
//! is made on its first request and kept beside the identity bytes, at the
//! best ratio for a body kept per head ([`Effort::Kept`]) or at a bounded
//! cost per byte for a body made for one request ([`Effort::Once`]).
//! Which coding a request gets is the edge's (`web::encoding`).

use bytes::Bytes;
use std::io::Write as _;
use std::sync::OnceLock;

/// Brotli's quality for bodies made once and kept (of 0 to 11).
const BROTLI_QUALITY: u32 = 9;
/// Brotli's quality for a body made for one request (a page, a filtered
/// dashboard): about a quarter of quality 9's time (3.6 ms a megabyte of
/// dashboard JSON, `cargo bench -p freedom-shared --bench encoding`), so a
/// request no one else shares cannot buy much CPU per byte it asks for.
const BROTLI_QUALITY_ONCE: u32 = 3;
/// Brotli's window (log2 bytes).
const BROTLI_WINDOW: u32 = 22;
/// gzip's level for bodies made once and kept: zlib's best.
const GZIP_LEVEL: u32 = 9;
/// gzip's level for a body made for one request (a tenth of level 9's time
/// on dashboard JSON, and the size of level 4).
const GZIP_LEVEL_ONCE: u32 = 2;

/// How hard to compress a body: once and kept (the best ratio; the cost is
/// paid once per head), or for one request (bounded cost per byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Effort {
    /// Made once and kept for every request after.
    #[default]
    Kept,
    /// Made for one request and dropped.
    Once,
}

/// A content coding the service sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    /// Brotli (RFC 7932).
    Br,
    /// gzip (RFC 1952).
    Gzip,
    /// As is.
    Identity,
}

impl Coding {
    /// The `Content-Encoding` token, `None` for identity.
    pub(crate) fn token(self) -> Option<&'static str> {
        match self {
            Coding::Br => Some("br"),
            Coding::Gzip => Some("gzip"),
            Coding::Identity => None,
        }
    }

    /// What the entity tag of this representation appends inside the quotes.
    pub(crate) fn tag_suffix(self) -> &'static str {
        match self {
            Coding::Br => "-br",
            Coding::Gzip => "-gz",
            Coding::Identity => "",
        }
    }
}

/// A body and its compressed forms, each made at most once.
#[derive(Debug, Default)]
pub struct Encoded {
    identity: Bytes,
    effort: Effort,
    br: OnceLock<Bytes>,
    gzip: OnceLock<Bytes>,
}

impl Encoded {
    /// `identity`, kept: its compressed forms made on first use, at the
    /// best ratio.
    pub fn new(identity: impl Into<Bytes>) -> Encoded {
        Encoded {
            identity: identity.into(),
            effort: Effort::Kept,
            br: OnceLock::new(),
            gzip: OnceLock::new(),
        }
    }

    /// `identity`, made for one request: compressed at a bounded cost per
    /// byte ([`Effort::Once`]).
    pub(crate) fn once(identity: impl Into<Bytes>) -> Encoded {
        Encoded {
            effort: Effort::Once,
            ..Encoded::new(identity)
        }
    }

    /// The identity bytes.
    pub(crate) fn identity(&self) -> &Bytes {
        &self.identity
    }

    /// The body in `coding`, compressed now if this is its first use.
    pub(crate) fn body(&self, coding: Coding) -> Bytes {
        match coding {
            Coding::Identity => self.identity.clone(),
            Coding::Br => self
                .br
                .get_or_init(|| brotli_at(&self.identity, self.effort))
                .clone(),
            Coding::Gzip => self
                .gzip
                .get_or_init(|| gzip_at(&self.identity, self.effort))
                .clone(),
        }
    }
}

/// `bytes` compressed with Brotli at `effort`.
pub fn brotli_at(bytes: &[u8], effort: Effort) -> Bytes {
    let quality = match effort {
        Effort::Kept => BROTLI_QUALITY,
        Effort::Once => BROTLI_QUALITY_ONCE,
    };
    let mut out = Vec::with_capacity(bytes.len() / 4);
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 64 * 1024, quality, BROTLI_WINDOW);
        // Writing to a Vec cannot fail.
        let _ = writer.write_all(bytes);
    }
    Bytes::from(out)
}

/// `bytes` compressed with gzip at `effort`.
pub fn gzip_at(bytes: &[u8], effort: Effort) -> Bytes {
    let level = match effort {
        Effort::Kept => GZIP_LEVEL,
        Effort::Once => GZIP_LEVEL_ONCE,
    };
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        flate2::Compression::new(level),
    );
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    Bytes::from(encoder.finish().unwrap_or_default())
}
