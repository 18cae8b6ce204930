//! Traces on disk: finding the traces and stream files under input paths
//! ([`discover`]) and opening them into a [`Traceset`](traceset::Traceset):
//! metadata parsed and compiled (`crate::schema`), files mapped, packets
//! indexed and grouped into streams ([`crate::stream`]).

pub mod discover;
pub mod traceset;
