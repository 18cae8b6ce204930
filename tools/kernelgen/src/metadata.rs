//! The TSDL metadata text, laid out as lttng-modules 2.11 prints it for an
//! x86-64 kernel session (byte-aligned integers, 64-bit `unsigned long`).

use std::fmt::Write as _;

use crate::catalog::{Ty, EVENTS};

/// What the metadata needs to know about the trace.
pub(crate) struct MetadataParams<'a> {
    pub trace_uuid: [u8; 16],
    pub clock_uuid: [u8; 16],
    pub hostname: &'a str,
    pub trace_name: &'a str,
    pub creation_datetime: &'a str,
    pub clock_offset: u64,
}

/// The kernel release advertised in `env`; the sched_switch `prev_state`
/// values the generator writes follow this kernel's encoding (>= 4.15).
pub(crate) const KERNEL_RELEASE: &str = "5.4.0-traceloom";

pub(crate) fn format_uuid(u: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Escapes a string for a TSDL string literal the way LTTng does.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn integer(size: u32, signed: bool, base: u32) -> String {
    format!(
        "integer {{ size = {size}; align = 8; signed = {}; encoding = none; base = {base}; }}",
        u32::from(signed)
    )
}

fn field_decl(out: &mut String, name: &str, ty: Ty) {
    let decl = match ty {
        Ty::Int => format!("{} _{name};", integer(32, true, 10)),
        Ty::UInt => format!("{} _{name};", integer(32, false, 10)),
        Ty::Long => format!("{} _{name};", integer(64, true, 10)),
        Ty::ULong => format!("{} _{name};", integer(64, false, 10)),
        Ty::ULongHex => format!("{} _{name};", integer(64, false, 16)),
        Ty::UShort => format!("{} _{name};", integer(16, false, 10)),
        Ty::Comm => format!(
            "integer {{ size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; }} _{name}[16];"
        ),
        Ty::Str => format!("string _{name};"),
        Ty::PidSeqU8 => {
            // The length field comes first, on its own line, as in LTTng.
            let _ = writeln!(out, "\t\t{} __{name}_length;", integer(8, false, 10));
            format!("{} _{name}[ __{name}_length ];", integer(32, true, 10))
        }
    };
    let _ = writeln!(out, "\t\t{decl}");
}

/// Renders the whole metadata file.
pub(crate) fn render(p: &MetadataParams<'_>) -> String {
    let mut m = String::with_capacity(16 * 1024);
    // The signature line lets readers that sniff text metadata (babeltrace
    // 1.x) recognise it; LTTng's own text metadata starts the same way.
    m.push_str("/* CTF 1.8 */\n\n");
    m.push_str(
        "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n\
         typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n\
         typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n\
         typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\
         typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n\
         typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n\
         typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n\n",
    );
    let _ = write!(
        m,
        "trace {{\n\
         \tmajor = 1;\n\
         \tminor = 8;\n\
         \tuuid = \"{}\";\n\
         \tbyte_order = le;\n\
         \tpacket.header := struct {{\n\
         \t\tuint32_t magic;\n\
         \t\tuint8_t  uuid[16];\n\
         \t\tuint32_t stream_id;\n\
         \t\tuint64_t stream_instance_id;\n\
         \t}};\n\
         }};\n\n",
        format_uuid(&p.trace_uuid)
    );
    let _ = write!(
        m,
        "env {{\n\
         \thostname = \"{}\";\n\
         \tdomain = \"kernel\";\n\
         \tsysname = \"Linux\";\n\
         \tkernel_release = \"{KERNEL_RELEASE}\";\n\
         \tkernel_version = \"#1 SMP PREEMPT traceloom-kernelgen\";\n\
         \ttracer_name = \"lttng-modules\";\n\
         \ttracer_major = 2;\n\
         \ttracer_minor = 11;\n\
         \ttracer_patchlevel = 0;\n\
         \ttrace_buffering_scheme = \"global\";\n\
         \ttrace_name = \"{}\";\n\
         \ttrace_creation_datetime = \"{}\";\n\
         }};\n\n",
        escape(p.hostname),
        escape(p.trace_name),
        escape(p.creation_datetime)
    );
    let _ = write!(
        m,
        "clock {{\n\
         \tname = \"monotonic\";\n\
         \tuuid = \"{}\";\n\
         \tdescription = \"Monotonic Clock\";\n\
         \tfreq = 1000000000; /* Frequency, in Hz */\n\
         \t/* clock value offset from Epoch is: offset * (1/freq) */\n\
         \toffset = {};\n\
         }};\n\n",
        format_uuid(&p.clock_uuid),
        p.clock_offset
    );
    m.push_str(
        "typealias integer {\n\
         \tsize = 27; align = 1; signed = false;\n\
         \tmap = clock.monotonic.value;\n\
         } := uint27_clock_monotonic_t;\n\n\
         typealias integer {\n\
         \tsize = 32; align = 8; signed = false;\n\
         \tmap = clock.monotonic.value;\n\
         } := uint32_clock_monotonic_t;\n\n\
         typealias integer {\n\
         \tsize = 64; align = 8; signed = false;\n\
         \tmap = clock.monotonic.value;\n\
         } := uint64_clock_monotonic_t;\n\n",
    );
    m.push_str(
        "struct packet_context {\n\
         \tuint64_clock_monotonic_t timestamp_begin;\n\
         \tuint64_clock_monotonic_t timestamp_end;\n\
         \tuint64_t content_size;\n\
         \tuint64_t packet_size;\n\
         \tuint64_t packet_seq_num;\n\
         \tunsigned long events_discarded;\n\
         \tuint32_t cpu_id;\n\
         };\n\n",
    );
    m.push_str(
        "struct event_header_compact {\n\
         \tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n\
         \tvariant <id> {\n\
         \t\tstruct {\n\
         \t\t\tuint27_clock_monotonic_t timestamp;\n\
         \t\t} compact;\n\
         \t\tstruct {\n\
         \t\t\tuint32_t id;\n\
         \t\t\tuint64_clock_monotonic_t timestamp;\n\
         \t\t} extended;\n\
         \t} v;\n\
         } align(8);\n\n\
         struct event_header_large {\n\
         \tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n\
         \tvariant <id> {\n\
         \t\tstruct {\n\
         \t\t\tuint32_clock_monotonic_t timestamp;\n\
         \t\t} compact;\n\
         \t\tstruct {\n\
         \t\t\tuint32_t id;\n\
         \t\t\tuint64_clock_monotonic_t timestamp;\n\
         \t\t} extended;\n\
         \t} v;\n\
         } align(8);\n\n",
    );
    m.push_str(
        "stream {\n\
         \tid = 0;\n\
         \tevent.header := struct event_header_compact;\n\
         \tpacket.context := struct packet_context;\n\
         };\n\n",
    );
    // LTTng keeps its event list newest-first, so real kernel metadata
    // lists events by decreasing id.
    for (id, ev) in EVENTS.iter().enumerate().rev() {
        let _ = write!(
            m,
            "event {{\n\tname = \"{}\";\n\tid = {id};\n\tstream_id = 0;\n\tfields := struct {{\n",
            ev.name
        );
        for &(name, ty) in ev.fields {
            field_decl(&mut m, name, ty);
        }
        m.push_str("\t};\n};\n\n");
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> MetadataParams<'static> {
        MetadataParams {
            trace_uuid: [
                0x5d, 0x07, 0x9b, 0xb9, 0x28, 0xf0, 0x66, 0x48, 0x8b, 0xcf, 0x39, 0x0b, 0xb7, 0xf3,
                0x15, 0x23,
            ],
            clock_uuid: [0; 16],
            hostname: "host\"x",
            trace_name: "t",
            creation_datetime: "20231114T221320+0000",
            clock_offset: 1_699_999_000_000_000_000,
        }
    }

    #[test]
    fn uuid_format() {
        assert_eq!(
            format_uuid(&params().trace_uuid),
            "5d079bb9-28f0-6648-8bcf-390bb7f31523"
        );
    }

    #[test]
    fn lttng_forms_present() {
        let m = render(&params());
        assert!(m.starts_with("/* CTF 1.8 */\n"));
        assert!(m.contains("\t\tuint64_t stream_instance_id;\n"));
        assert!(m.contains("\tuint64_t packet_seq_num;\n\tunsigned long events_discarded;\n"));
        assert!(m.contains("enum : uint5_t { compact = 0 ... 30, extended = 31 } id;"));
        assert!(m.contains("\tevent.header := struct event_header_compact;\n"));
        assert!(m.contains("hostname = \"host\\\"x\";"));
        assert!(m.contains("offset = 1699999000000000000;"));
        assert!(m.contains(
            "\t\tinteger { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _prev_comm[16];\n"
        ));
        assert!(m.contains(
            "\t\tinteger { size = 8; align = 8; signed = 0; encoding = none; base = 10; } __vtids_length;\n\
             \t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vtids[ __vtids_length ];\n"
        ));
        assert!(m.contains("\t\tstring _filename;\n"));
        // Events by decreasing id, the first being the last syscall exit.
        let first = m.find("name = \"syscall_exit_exit_group\"").unwrap();
        let last = m.find("name = \"sched_switch\"").unwrap();
        assert!(first < last);
        assert_eq!(m.matches("event {").count(), EVENTS.len());
    }
}
