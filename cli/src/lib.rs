//! The traceloom command-line commands.
