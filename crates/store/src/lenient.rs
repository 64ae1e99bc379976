//! Reading stored JSON back when it holds a non-finite float.
//!
//! serde_json writes NaN and ±infinity as `null` and then refuses to read `null` as a float.
//! A measurement holding one such value (a rate over a zero-length phase, say) must still
//! load, so when strict parsing fails this reader takes `null` as NaN wherever a float is
//! expected. Everything else reads exactly as serde_json reads it.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;

/// Parses `text` as serde_json does, but with `null` read as NaN where a float is expected.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(value) => Ok(value),
        Err(strict) => match serde_json::from_str::<Value>(text) {
            Ok(tree) => T::deserialize(Lenient(tree)),
            Err(_) => Err(strict),
        },
    }
}

/// A JSON tree whose `null`s read as NaN when a float is asked for.
struct Lenient(Value);

impl<'de> Deserializer<'de> for Lenient {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Items(items.into_iter())),
            Value::Object(map) => visitor.visit_map(Entries { entries: map.into_iter(), value: None }),
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_f64(f64::NAN),
            other => Lenient(other).deserialize_any(visitor),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_f32(f32::NAN),
            other => Lenient(other).deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Lenient(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            // Unit variants (`"higher"`), the only kind the model has.
            Value::String(variant) => visitor.visit_enum(IntoDeserializer::<Self::Error>::into_deserializer(variant)),
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 char str string bytes byte_buf unit unit_struct
        seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The elements of a JSON array.
struct Items(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Items {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        self.0.next().map(|item| seed.deserialize(Lenient(item))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The members of a JSON object.
struct Entries {
    entries: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(IntoDeserializer::<Self::Error>::into_deserializer(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let value = self.value.take().ok_or_else(|| de::Error::custom("a JSON object key without a value"))?;
        seed.deserialize(Lenient(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsarena_core::{Better, JobResult, Measurement};

    #[test]
    fn non_finite_floats_read_back_as_nan_and_the_rest_unchanged() {
        let mut m = Measurement { complete: true, ..Default::default() };
        m.push("read_iops", "ops/s", Better::Higher, f64::INFINITY);
        m.push("read_lat_p99", "ns", Better::Lower, 1234.5);
        let mut job =
            JobResult { name: "io".into(), error: -5, error_message: Some("EIO".into()), ..Default::default() };
        job.read.clat.mean = f64::NAN;
        job.read.clat.percentiles = vec![(99.0, 7), (99.9, 8)];
        job.read.bw_series = vec![1.0, f64::NEG_INFINITY];
        job.options = vec![("rw".into(), "read".into())];
        m.jobs_mut().push(job);
        let text = serde_json::to_string(&m).unwrap();
        assert!(serde_json::from_str::<Measurement>(&text).is_err(), "strict serde_json refuses null floats");

        let back: Measurement = from_str(&text).unwrap();
        assert!(back.metrics[0].value.is_nan());
        assert!(back.jobs()[0].read.clat.mean.is_nan());
        assert!(back.jobs()[0].read.bw_series[1].is_nan());
        let mut fixed = m.clone();
        fixed.metrics[0].value = 0.0;
        fixed.jobs_mut()[0].read.clat.mean = 0.0;
        fixed.jobs_mut()[0].read.bw_series[1] = 0.0;
        let mut back = back;
        back.metrics[0].value = 0.0;
        back.jobs_mut()[0].read.clat.mean = 0.0;
        back.jobs_mut()[0].read.bw_series[1] = 0.0;
        assert_eq!(back, fixed);
    }

    #[test]
    fn bad_json_keeps_the_strict_error() {
        let e = from_str::<Measurement>("{not json").unwrap_err();
        assert!(e.to_string().contains("key must be a string"), "{e}");
    }
}
