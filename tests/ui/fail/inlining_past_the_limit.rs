#[gsync::kernels]
mod m {
    #[device]
    fn f0(a: &mut [u32]) {
        a[0] += 1;
    }
    #[device]
    fn f1(a: &mut [u32]) {
        f0(a);
        f0(a);
    }
    #[device]
    fn f2(a: &mut [u32]) {
        f1(a);
        f1(a);
    }
    #[device]
    fn f3(a: &mut [u32]) {
        f2(a);
        f2(a);
    }
    #[device]
    fn f4(a: &mut [u32]) {
        f3(a);
        f3(a);
    }
    #[device]
    fn f5(a: &mut [u32]) {
        f4(a);
        f4(a);
    }
    #[device]
    fn f6(a: &mut [u32]) {
        f5(a);
        f5(a);
    }
    #[device]
    fn f7(a: &mut [u32]) {
        f6(a);
        f6(a);
    }
    #[device]
    fn f8(a: &mut [u32]) {
        f7(a);
        f7(a);
    }
    #[device]
    fn f9(a: &mut [u32]) {
        f8(a);
        f8(a);
    }
    #[device]
    fn f10(a: &mut [u32]) {
        f9(a);
        f9(a);
    }

    #[grid_phases]
    pub fn k(a: &mut [u32]) {
        f10(a);
    }
}

fn main() {}
