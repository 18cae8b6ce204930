//! GUI-free viewer models: each talks to the engine through events requests
//! and produces immutable render objects for a time range.
