// A small scene for scripts/reproduce's applications experiment: reflective
// and refractive spheres over a checkered plane, no include files needed.
global_settings { assumed_gamma 1.0 max_trace_level 8 }
camera { location <0, 3, -9> look_at <0, 1, 0> angle 50 }
light_source { <-6, 10, -6> color rgb <1, 1, 1> }
light_source { <8, 6, -4> color rgb <0.4, 0.4, 0.5> }
plane { y, 0 pigment { checker color rgb <0.9, 0.9, 0.9> color rgb <0.1, 0.2, 0.5> }
	finish { reflection 0.2 } }
#declare I = 0;
#while (I < 12)
	sphere { <-3.3 + mod(I, 4) * 2.2, 0.7 + div(I, 4) * 0.2, -1 + div(I, 4) * 2.2>, 0.7
		pigment { color rgbf <0.3 + 0.05 * I, 0.8 - 0.05 * I, 0.6, 0.5 * mod(I, 2)> }
		finish { reflection 0.4 specular 0.6 }
		interior { ior 1.4 } }
	#declare I = I + 1;
#end
