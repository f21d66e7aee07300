//! Type inference for integer and float literals, the way rustc does it:
//! an unsuffixed literal gets a type variable that later uses pin down;
//! what stays unconstrained defaults to `i32` or `f64`.

use crate::ir::Scalar;

/// An inference variable: the type of an expression or variable while
/// lowering, an index into the [`TypeTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TyId(pub usize);

#[derive(Clone, Copy, Debug)]
enum Slot {
    Known(Scalar),
    /// `{integer}`: some integer type, not yet known.
    AnyInt,
    /// `{float}`: some float type, not yet known.
    AnyFloat,
    /// Nothing known yet (a `let` whose value is computed in branches).
    Unknown,
    Link(usize),
}

/// What a type currently is, as far as inference knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inferred {
    Known(Scalar),
    AnyInt,
    AnyFloat,
}

impl Inferred {
    /// How rustc prints it in messages.
    pub fn describe(self) -> String {
        match self {
            Inferred::Known(s) => format!("`{}`", s.name()),
            Inferred::AnyInt => "an integer".to_string(),
            Inferred::AnyFloat => "a float".to_string(),
        }
    }
}

/// The type table: one slot per typed expression, joined by unification.
#[derive(Default)]
pub struct TypeTable {
    slots: Vec<Slot>,
}

impl TypeTable {
    pub fn known(&mut self, s: Scalar) -> TyId {
        self.push(Slot::Known(s))
    }
    pub fn any_int(&mut self) -> TyId {
        self.push(Slot::AnyInt)
    }
    pub fn any_float(&mut self) -> TyId {
        self.push(Slot::AnyFloat)
    }
    pub fn unknown(&mut self) -> TyId {
        self.push(Slot::Unknown)
    }

    fn push(&mut self, slot: Slot) -> TyId {
        self.slots.push(slot);
        TyId(self.slots.len() - 1)
    }

    fn root(&self, mut i: usize) -> usize {
        while let Slot::Link(next) = self.slots[i] {
            i = next;
        }
        i
    }

    pub fn get(&self, id: TyId) -> Inferred {
        match self.slots[self.root(id.0)] {
            Slot::Known(s) => Inferred::Known(s),
            Slot::AnyInt => Inferred::AnyInt,
            Slot::AnyFloat => Inferred::AnyFloat,
            Slot::Unknown => Inferred::AnyInt,
            Slot::Link(_) => unreachable!("root() follows links"),
        }
    }

    /// Whether nothing constrains the type yet, not even to an integer or a float.
    pub fn is_unconstrained(&self, id: TyId) -> bool {
        matches!(self.slots[self.root(id.0)], Slot::Unknown)
    }

    /// The scalar if already known.
    pub fn scalar(&self, id: TyId) -> Option<Scalar> {
        match self.get(id) {
            Inferred::Known(s) => Some(s),
            _ => None,
        }
    }

    /// Makes two types equal; on a conflict returns both sides for the message.
    pub fn unify(&mut self, a: TyId, b: TyId) -> Result<(), (Inferred, Inferred)> {
        let (ra, rb) = (self.root(a.0), self.root(b.0));
        if ra == rb {
            return Ok(());
        }
        let merged = match (self.slots[ra], self.slots[rb]) {
            (Slot::Unknown, other) | (other, Slot::Unknown) => other,
            (Slot::Known(x), Slot::Known(y)) if x == y => Slot::Known(x),
            (Slot::Known(x), Slot::AnyInt) | (Slot::AnyInt, Slot::Known(x)) if x.is_int() => Slot::Known(x),
            (Slot::Known(x), Slot::AnyFloat) | (Slot::AnyFloat, Slot::Known(x)) if x.is_float() => Slot::Known(x),
            (Slot::AnyInt, Slot::AnyInt) => Slot::AnyInt,
            (Slot::AnyFloat, Slot::AnyFloat) => Slot::AnyFloat,
            _ => return Err((self.get(a), self.get(b))),
        };
        self.slots[ra] = merged;
        self.slots[rb] = Slot::Link(ra);
        Ok(())
    }

    /// Pins a type to a scalar.
    pub fn require(&mut self, id: TyId, s: Scalar) -> Result<(), (Inferred, Inferred)> {
        let k = self.known(s);
        self.unify(id, k)
    }

    /// Applies rustc's fallback (`i32`, `f64`) and returns the final table.
    pub fn finish(self) -> Vec<Scalar> {
        (0..self.slots.len())
            .map(|i| match self.get(TyId(i)) {
                Inferred::Known(s) => s,
                Inferred::AnyInt => Scalar::I32,
                Inferred::AnyFloat => Scalar::F64,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_takes_the_type_it_meets() {
        let mut t = TypeTable::default();
        let lit = t.any_int();
        let var = t.known(Scalar::U8);
        t.unify(lit, var).unwrap();
        assert_eq!(t.finish()[lit.0], Scalar::U8);
    }

    #[test]
    fn unconstrained_literals_fall_back_like_rustc() {
        let mut t = TypeTable::default();
        let (i, f) = (t.any_int(), t.any_float());
        let table = t.finish();
        assert_eq!((table[i.0], table[f.0]), (Scalar::I32, Scalar::F64));
    }

    #[test]
    fn integer_and_float_do_not_unify() {
        let mut t = TypeTable::default();
        let (i, f) = (t.any_int(), t.known(Scalar::F32));
        assert!(t.unify(i, f).is_err());
    }

    #[test]
    fn chains_resolve_through_links() {
        let mut t = TypeTable::default();
        let (a, b, c) = (t.any_int(), t.any_int(), t.known(Scalar::I64));
        t.unify(a, b).unwrap();
        t.unify(b, c).unwrap();
        assert_eq!(t.scalar(a), Some(Scalar::I64));
    }
}
