//! How a scenario section is declared: one line per key carries its doc, type, unit and
//! default, and everything else (the struct, its `Default`, loading a partial JSON table with
//! errors that name the key, the key list the Python layer and editors read) follows from it.
//! Adding a key is one `///` doc and one line in a section.

use serde_json::{json, Value};

use super::{bad, ConfigError};

/// How a key is written by users (the Python layer turns these unit strings into base units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A plain JSON value: a number, a boolean or one of the listed names.
    Plain,
    /// Bytes, written "64KB", "64KiB", "1448B".
    Size,
    /// Bits per second, written "1Gbps".
    Rate,
    /// Picoseconds, written "200ms", "100us".
    Time,
    /// Picoseconds, or "off" for 0.
    TimeOrOff,
    /// A queue limit, written "64KB", "42pkt", "unlimited" or "off".
    Limit,
    /// (bytes, cumulative probability) points, or the name of a file of them.
    Cdf,
    /// A built-in flow-size distribution's name, a CDF file's text (`{"file", "text"}`, the
    /// Python layer reads the file), or (bytes, cumulative probability) points.
    SizeCdf,
    /// A list of picoseconds, written ["120us", "3ms"].
    Times,
    /// A rate cap, written "80%" (a share of the link) or "800Mbps", or "off".
    RateCap,
    /// A described topology: the name of a TOML file of switches, hosts and links, or its
    /// tables inline (normalized: the tables, in base units).
    TopologyFile,
    /// A list of host numbers, written [0, 122, 35].
    Hosts,
    /// A list of sizes, written ["10KB", "100KB"].
    Sizes,
    /// A nested section.
    Section,
}

impl Unit {
    /// The name the key list carries.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Plain => "plain",
            Unit::Size => "size",
            Unit::Rate => "rate",
            Unit::Time => "time",
            Unit::TimeOrOff => "time_or_off",
            Unit::Limit => "limit",
            Unit::Cdf => "cdf",
            Unit::SizeCdf => "size_cdf",
            Unit::Times => "times",
            Unit::RateCap => "rate_cap",
            Unit::TopologyFile => "topology_file",
            Unit::Hosts => "hosts",
            Unit::Sizes => "sizes",
            Unit::Section => "section",
        }
    }
}

/// A value a scenario key can hold: how it loads from JSON and what the key list says of it.
pub trait Shape: Sized {
    /// Load a JSON value given for the key `field` (a dotted path).
    fn load(field: &str, v: Value) -> Result<Self, ConfigError>;
    /// A JSON Schema fragment of the normalized value.
    fn shape() -> Value;
}

fn load_serde<T: serde::de::DeserializeOwned>(
    field: &str,
    v: Value,
    what: &str,
) -> Result<T, ConfigError> {
    T::deserialize(&v).map_err(|_| {
        let shown = super::shown(&v);
        bad(field, format!("expected {what}, got {shown}"))
    })
}

macro_rules! plain_shape {
    ($($ty:ty => $what:literal, $shape:expr;)*) => {$(
        impl Shape for $ty {
            fn load(field: &str, v: Value) -> Result<Self, ConfigError> {
                load_serde(field, v, $what)
            }
            fn shape() -> Value {
                $shape
            }
        }
    )*};
}

plain_shape! {
    u64 => "a whole number ≥ 0", json!({"type": "integer", "minimum": 0});
    u32 => "a whole number in 0..4294967295", json!({"type": "integer", "minimum": 0, "maximum": u32::MAX});
    f64 => "a number", json!({"type": "number"});
    bool => "true or false", json!({"type": "boolean"});
    Vec<u64> => "a list of whole numbers ≥ 0",
        json!({"type": "array", "items": {"type": "integer", "minimum": 0}});
    Vec<u32> => "a list of host numbers (whole numbers ≥ 0)",
        json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": u32::MAX}});
    Vec<(u64, f64)> => "a list of [bytes, probability] points",
        json!({"type": "array", "items": {"type": "array", "prefixItems": [{"type": "integer", "minimum": 0}, {"type": "number"}], "minItems": 2, "maxItems": 2}});
}

impl<T: Shape> Shape for Option<T> {
    fn load(field: &str, v: Value) -> Result<Self, ConfigError> {
        if v.is_null() {
            Ok(None)
        } else {
            T::load(field, v).map(Some)
        }
    }
    fn shape() -> Value {
        json!({"anyOf": [T::shape(), {"type": "null"}]})
    }
}

/// Implement [`Shape`] for a unit-only enum from its variants (names as serde writes them).
macro_rules! choices {
    ($($name:ident: $($variant:ident),+;)*) => {$(
        impl $crate::config::section::Shape for $name {
            fn load(field: &str, v: serde_json::Value) -> Result<Self, $crate::config::ConfigError> {
                <Self as serde::Deserialize>::deserialize(&v).map_err(|_| {
                    let shown = $crate::config::shown(&v);
                    let allowed: Vec<String> = Self::shape()["enum"]
                        .as_array()
                        .map(|a| a.iter().map(|n| n.to_string()).collect())
                        .unwrap_or_default();
                    $crate::config::bad(field, format!("expected one of {}, got {shown}", allowed.join(", ")))
                })
            }
            fn shape() -> serde_json::Value {
                let names: Vec<serde_json::Value> = [$($name::$variant),+]
                    .iter()
                    .map(|v| serde_json::to_value(v).expect("an enum variant serializes"))
                    .collect();
                serde_json::json!({ "enum": names })
            }
        }
    )*};
}
pub(crate) use choices;

/// One key of a section as the key list describes it.
pub struct Key {
    /// Field name.
    pub name: &'static str,
    /// How users write it.
    pub unit: Unit,
    /// Its doc comment, line by line.
    pub doc: &'static [&'static str],
    /// JSON Schema fragment of its normalized value.
    pub shape: Value,
}

/// `parent.name`, or `name` at the top level.
pub(crate) fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

/// The key list of a section as JSON text: per key its unit, doc, default and schema (nested
/// sections give their own keys), in declaration order, which is the order of the docs.
pub(crate) fn describe(
    keys: &[Key],
    defaults: &Value,
    nested: &dyn Fn(&str) -> Option<String>,
) -> String {
    let entries: Vec<String> = keys
        .iter()
        .map(|k| {
            let mut text = json!({
                "unit": k.unit.name(),
                "doc": k.doc.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "),
                "default": defaults[k.name],
                "schema": k.shape,
            })
            .to_string();
            if let Some(keys) = nested(k.name) {
                text.pop(); // its closing brace
                text.push_str(&format!(",\"keys\":{keys}}}"));
            }
            format!("{}:{text}", Value::from(k.name))
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// Declare a section: its struct, `Default`, [`Shape`] (loading with named errors) and key list.
macro_rules! section {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                pub $field:ident: $ty:ty [$unit:ident] = $default:expr,
            )*
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)* }
            }
        }

        impl $name {
            /// Every key of the section, in declaration order.
            pub fn keys() -> Vec<$crate::config::section::Key> {
                vec![$($crate::config::section::Key {
                    name: stringify!($field),
                    unit: $crate::config::section::Unit::$unit,
                    doc: &[$($doc),*],
                    shape: <$ty as $crate::config::section::Shape>::shape(),
                }),*]
            }

            /// Load a (partial) table given at `path`: absent keys take their defaults.
            pub fn load_table(
                path: &str,
                v: serde_json::Value,
            ) -> Result<Self, $crate::config::ConfigError> {
                let serde_json::Value::Object(mut m) = v else {
                    return Err($crate::config::bad(
                        if path.is_empty() { "scenario" } else { path },
                        format!("expected a table of settings, got {}", $crate::config::shown(&v)),
                    ));
                };
                let mut out = Self::default();
                $(
                    if let Some(x) = m.remove(stringify!($field)) {
                        out.$field = <$ty as $crate::config::section::Shape>::load(
                            &$crate::config::section::join(path, stringify!($field)),
                            x,
                        )?;
                    }
                )*
                if let Some(k) = m.keys().next() {
                    let allowed = [$(stringify!($field)),*].join(", ");
                    return Err($crate::config::bad(
                        &$crate::config::section::join(path, k),
                        format!("unknown key; allowed: {allowed}"),
                    ));
                }
                Ok(out)
            }
        }
    };
}
pub(crate) use section;

/// A section nested in another loads as a table.
macro_rules! nested {
    ($($name:ident),*) => {$(
        impl $crate::config::section::Shape for $name {
            fn load(field: &str, v: serde_json::Value) -> Result<Self, $crate::config::ConfigError> {
                $name::load_table(field, v)
            }
            fn shape() -> serde_json::Value {
                serde_json::json!({"type": "object"})
            }
        }
    )*};
}
pub(crate) use nested;
