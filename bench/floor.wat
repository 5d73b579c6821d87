;; The floor of bench/floor.ts in WebAssembly SIMD (`simdFloor`): the same pass per cell, two rows
;; per instruction, for what the machine does at best with the instructions the engine's kernels
;; use (src/engine/kernels/rows.wat). The rows are padded to an even count with a NaN score, which
;; passes no cut.
(module
  (import "env" "memory" (memory 1))
  ;; Runs `cells` cells over n rows (n even) cycling through the T cuts at `cuts`; returns the
  ;; checksum of bench/floor.ts `floorCells` (each cell's rho^2, plus n * 1e-300).
  (func (export "floorCells")
    (param $scores i32) (param $relevance i32) (param $dy i32) (param $cuts i32) (param $T i32)
    (param $n i32) (param $rows f64) (param $syy f64) (param $cells i32) (result f64)
    (local $c i32) (local $k i32) (local $end i32) (local $checksum f64)
    (local $cut v128) (local $kept v128) (local $kr v128) (local $one v128)
    (local $count v128) (local $s1 v128) (local $s2 v128) (local $sy v128)
    (local $n1 f64) (local $a f64) (local $b f64) (local $y f64) (local $spread f64)
    (local.set $one (f64x2.splat (f64.const 1)))
    (local.set $end (i32.shl (local.get $n) (i32.const 3)))
    (block $cellsDone
      (loop $cell
        (br_if $cellsDone (i32.ge_u (local.get $c) (local.get $cells)))
        (local.set $cut (f64x2.splat (f64.load (i32.add (local.get $cuts) (i32.shl (i32.rem_u (local.get $c) (local.get $T)) (i32.const 3))))))
        (local.set $count (v128.const f64x2 0 0))
        (local.set $s1 (v128.const f64x2 0 0))
        (local.set $s2 (v128.const f64x2 0 0))
        (local.set $sy (v128.const f64x2 0 0))
        (local.set $k (i32.const 0))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $kept (f64x2.ge (v128.load (i32.add (local.get $scores) (local.get $k))) (local.get $cut)))
            (local.set $kr (v128.and (local.get $kept) (v128.load (i32.add (local.get $relevance) (local.get $k)))))
            (local.set $count (f64x2.add (local.get $count) (v128.and (local.get $kept) (local.get $one))))
            (local.set $s1 (f64x2.add (local.get $s1) (local.get $kr)))
            (local.set $s2 (f64x2.add (local.get $s2) (f64x2.mul (local.get $kr) (local.get $kr))))
            (local.set $sy (f64x2.add (local.get $sy) (f64x2.mul (local.get $kr) (v128.load (i32.add (local.get $dy) (local.get $k))))))
            (local.set $k (i32.add (local.get $k) (i32.const 16)))
            (br $next)))
        (local.set $n1 (f64.add (f64x2.extract_lane 0 (local.get $count)) (f64x2.extract_lane 1 (local.get $count))))
        (local.set $a (f64.add (f64x2.extract_lane 0 (local.get $s1)) (f64x2.extract_lane 1 (local.get $s1))))
        (local.set $b (f64.add (f64x2.extract_lane 0 (local.get $s2)) (f64x2.extract_lane 1 (local.get $s2))))
        (local.set $y (f64.add (f64x2.extract_lane 0 (local.get $sy)) (f64x2.extract_lane 1 (local.get $sy))))
        (local.set $spread (f64.sub (local.get $b) (f64.div (f64.mul (local.get $a) (local.get $a)) (local.get $rows))))
        ;; rho^2 = sy^2 / (spread syy) when both are positive, else 0.
        (if (i32.and (f64.gt (local.get $spread) (f64.const 0)) (f64.gt (local.get $syy) (f64.const 0)))
          (then (local.set $checksum (f64.add (local.get $checksum)
            (f64.div (f64.mul (local.get $y) (local.get $y)) (f64.mul (local.get $spread) (local.get $syy)))))))
        (local.set $checksum (f64.add (local.get $checksum) (f64.mul (local.get $n1) (f64.const 1e-300))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $cell)))
    (local.get $checksum))
)
